"""Writes a generator's entries into test/models/manifest.json.

Each generator owns the entries whose "generator" field names it: they are
replaced by the new ones, every other entry is kept, in order.
"""

import json


def replace_entries(manifest_path, generator, entries):
    with open(manifest_path) as f:
        manifest = json.load(f)
    manifest["models"] = [m for m in manifest["models"]
                          if m.get("generator") != generator] + entries
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
