"""Conversations as every part of dialeval reads them: the record (``data``: numbered turns,
tool calls, images), readers of each message shape (``messages``, ``toolcalls``), the
user's rubric (``rubric``) and human labels (``labels``). The dialogue benchmark,
simulation, trust, the gate and the importers all use these; none reaches into a protocol."""
