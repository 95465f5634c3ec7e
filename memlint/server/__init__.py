"""`memlint server`: a Language Server Protocol server over stdio (the optional `server` extra: pygls).

Diagnostics on open, change (debounced) and save; code actions for each finding's fix, "fix all
safe", `# noqa`, and `source.fixAll.memlint` for fix-on-save. See docs/editors.md.
"""
