"""Generation runs with a paper's protocol, end to end on PostgreSQL through the real openai
client and the local OpenAI-compatible test server: items imported with ``import_pack``'s
service, generated with the pack's protocol, then scored by the pack's scoring run with no
conversion in between."""
