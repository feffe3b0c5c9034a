import pytest

from mobile_agent.agent.safety import SafetyGate
from mobile_agent.apps.registry import load_registry


@pytest.fixture(scope="module")
def gate():
    return SafetyGate(registry=load_registry())
