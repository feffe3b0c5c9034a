"""Model families (prompt building, reply parsing, coordinates) and the registry that names them.

from mobile_agent.model.families import get_family
family = get_family("ui-venus-2")
messages = family.build_messages(task, history, screenshot)
parsed = family.parse(reply.text, family.geometry(device_size), reasoning=reply.reasoning)
"""
