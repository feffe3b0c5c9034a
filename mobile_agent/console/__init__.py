"""The web console: the farm's phones, runs, episodes and the people's inbox, served from the store."""
