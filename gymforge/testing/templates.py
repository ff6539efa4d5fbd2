"""Two chat templates in the styles real tool-calling models ship, for tests and the engine
target: written for gymforge, following the conventions of each family.

- :data:`CHATML_TOOLS` (ChatML / Qwen style): ``<|im_start|>role\\n...<|im_end|>\\n``; the
  tools go into the system turn as one JSON object a line inside ``<tools></tools>``; an
  assistant tool call is a ``<tool_call>\\n{"name": ..., "arguments": ...}\\n</tool_call>``
  block (hermes format); consecutive tool results share one ``user`` turn of
  ``<tool_response>`` blocks.
- :data:`LLAMA3_TOOLS` (Llama 3 style): ``<|start_header_id|>role<|end_header_id|>\\n\\n...
  <|eot_id|>`` with a ``bos_token`` first; contents are trimmed; the tools are listed
  (indented JSON) in the system turn; a tool call is the bare JSON ``{"name": ...,
  "parameters": ...}``; tool results are ``ipython`` turns holding ``{"output": ...}``.

Both are rendered by ``transformers``' ``apply_chat_template`` (jinja with ``tojson``,
``trim_blocks`` and ``lstrip_blocks``), so they exercise what a real tokenizer config does.
:data:`SPECIAL_TOKENS` lists each style's special tokens (end-of-turn first) and
:data:`ADDED_TOKENS` the non-special added tokens vLLM's hermes parser looks up.
"""

from __future__ import annotations

CHATML_TOOLS = (
    "{%- if tools %}"
    "{{- '<|im_start|>system\\n' }}"
    "{%- if messages[0].role == 'system' %}{{- messages[0].content + '\\n\\n' }}{%- endif %}"
    "{{- '# Tools\\n\\nYou may call one function per turn. The functions, as JSON signatures,"
    " are inside <tools></tools>:\\n<tools>' }}"
    "{%- for tool in tools %}{{- '\\n' + (tool | tojson) }}{%- endfor %}"
    "{{- '\\n</tools>\\n\\nTo call one, answer with its name and arguments as JSON inside"
    ' <tool_call></tool_call>:\\n<tool_call>\\n{"name": <function-name>, "arguments":'
    " <args-json-object>}\\n</tool_call><|im_end|>\\n' }}"
    "{%- elif messages[0].role == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'system' %}"
    "{%- elif m.role == 'tool' %}"
    "{%- if loop.first or loop.previtem.role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}"
    "{{- '\\n<tool_response>\\n' + m.content + '\\n</tool_response>' }}"
    "{%- if loop.last or loop.nextitem.role != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}"
    "{%- elif m.role == 'assistant' %}"
    "{{- '<|im_start|>assistant\\n' + (m.content or '') }}"
    "{%- for call in m.tool_calls or [] %}"
    "{%- set fn = call.function if call.function is defined else call %}"
    "{%- if loop.first and m.content %}{{- '\\n' }}{%- endif %}"
    "{%- set args = fn.arguments if fn.arguments is string else (fn.arguments | tojson) %}"
    '{{- \'<tool_call>\\n{"name": "\' + fn.name + \'", "arguments": \' + args'
    " + '}\\n</tool_call>' }}"
    "{%- endfor %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

LLAMA3_TOOLS = (
    "{{- bos_token }}"
    "{%- if messages and messages[0].role == 'system' %}"
    "{%- set system = messages[0].content | trim %}{%- set rest = messages[1:] %}"
    "{%- else %}{%- set system = '' %}{%- set rest = messages %}{%- endif %}"
    "{{- '<|start_header_id|>system<|end_header_id|>\\n\\n' }}"
    "{%- if tools %}{{- 'Environment: ipython\\n\\n' }}{%- endif %}"
    "{{- system }}"
    "{%- if tools %}"
    "{{- '\\n\\nYou have access to the functions below. To call one, respond with JSON of the"
    ' form {"name": function name, "parameters": dictionary of its arguments}.\\n\\n\' }}'
    "{%- for t in tools %}{{- (t | tojson(indent=4)) + '\\n\\n' }}{%- endfor %}"
    "{%- endif %}"
    "{{- '<|eot_id|>' }}"
    "{%- for m in rest %}"
    "{%- if m.role == 'tool' or m.role == 'ipython' %}"
    "{{- '<|start_header_id|>ipython<|end_header_id|>\\n\\n' + ({'output': m.content} | tojson)"
    " + '<|eot_id|>' }}"
    "{%- elif m.role == 'assistant' and m.tool_calls %}"
    "{%- set fn = m.tool_calls[0].function %}"
    "{%- set args = fn.arguments if fn.arguments is string else (fn.arguments | tojson) %}"
    '{{- \'<|start_header_id|>assistant<|end_header_id|>\\n\\n{"name": "\' + fn.name'
    " + '\", \"parameters\": ' + args + '}<|eot_id|>' }}"
    "{%- else %}"
    "{{- '<|start_header_id|>' + m.role + '<|end_header_id|>\\n\\n' + (m.content | trim)"
    " + '<|eot_id|>' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{%- endif %}"
)

TEMPLATES = {"chatml": CHATML_TOOLS, "llama3": LLAMA3_TOOLS}
SPECIAL_TOKENS = {
    "chatml": ("<|im_end|>", "<|im_start|>", "<|endoftext|>"),
    "llama3": ("<|eot_id|>", "<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>"),
}
ADDED_TOKENS = {"chatml": ("<tool_call>", "</tool_call>"), "llama3": ("<|python_tag|>",)}
BOS = {"chatml": None, "llama3": "<|begin_of_text|>"}
PAD = {"chatml": "<|endoftext|>", "llama3": "<|eot_id|>"}
