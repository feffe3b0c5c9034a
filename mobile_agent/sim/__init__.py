"""The simulated phone, the model side's stand-ins, and farms of phones a real adb server drives.

    phone/     the phone (phone.py) and the parts it owns: packages, settings, tasks, input, display; its file system
    world/     the apps as data plus builders (WeChat, Meituan, Alipay, Settings, the launcher), popups and baits
    render/    pixels: a view tree laid out and drawn, the system chrome, PNG / JPEG encoding
    shell/     /system/bin/sh: the sh language and the Android commands
    wire/      adbd: the adb wire format, connections and streams, the services (shell, sync, the u2 server)
    servers/   the simulated model and the scripted judge, OpenAI-compatible HTTP on loopback

At this level sit what composes the parts: farm.py (phones, their adbd and an adb server), scenario.py (how a phone
starts, what a task must leave behind), state.py (the outcome and the seed data), profiles.py (latency, faults),
and the shipped scenarios/ and model scripts/.
"""
