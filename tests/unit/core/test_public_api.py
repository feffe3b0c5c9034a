import subprocess
import sys

import pytest

import mobile_agent


@pytest.mark.parametrize("name", [n for n in mobile_agent.__all__ if n != "__version__"])
def test_every_public_name_resolves(name):
    assert getattr(mobile_agent, name) is not None


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError):
        mobile_agent.no_such_thing  # noqa: B018


def test_importing_the_package_stays_cheap():
    code = "import sys, mobile_agent; print('mobile_agent.sim.farm' in sys.modules, 'openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
