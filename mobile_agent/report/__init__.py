"""Reports and exports of recorded episodes: HTML reports, training data, action overlays on screenshots."""
