"""Loopback stand-ins for the model side: the simulated GUI model (model_server.py), the scripted judge
(judge_server.py) and the OpenAI-compatible HTTP plumbing they share (http_endpoint.py)."""
