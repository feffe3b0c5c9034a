"""The adbd-facing side of the simulated phone: the adb wire format (packets.py), connections and streams
(connection.py), the listening adbd (adbd.py), the services it opens (services.py), the sync service (sync.py) and
the on-device uiautomator2 server (u2server.py)."""
