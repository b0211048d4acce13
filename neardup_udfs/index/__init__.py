"""The persistent near-duplicate index: its layout, manifest, checks and atomic commit
(store), and the near / similar searches over it (query)."""
