import pytest

from mobile_agent.apps.registry import load_registry
from mobile_agent.gate.gate import SafetyGate


@pytest.fixture(scope="module")
def gate():
    return SafetyGate(registry=load_registry())
