#!/usr/bin/env python3
"""Golden outputs for the chat-template feature tests (src/test/resources/chat-templates/features/features.json).

Each case is a small template exercising one Jinja2 feature that chat templates use. It is rendered with
transformers' own Jinja2 environment (trim_blocks, lstrip_blocks, loopcontrols, ImmutableSandboxedEnvironment,
tojson = json.dumps(ensure_ascii=False), raise_exception, strftime_now), so the Java renderer is checked against
exactly what apply_chat_template would produce.

    python3 -m venv /tmp/vt && /tmp/vt/bin/pip install jinja2 transformers
    /tmp/vt/bin/python tools/reference/chat_template_goldens.py

Tests never call Python; they read the JSON this writes.
"""
import json
import os
import sys

from transformers.utils.chat_template_utils import _compile_jinja_template

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "src", "test", "resources", "chat-templates", "features",
                   "features.json")

MESSAGES = [
    {"role": "system", "content": "  Be brief.  "},
    {"role": "user", "content": "Hi, Zürich 👋"},
    {"role": "assistant", "content": "<think>\nhmm\n</think>\n\nHello!", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Zürich", "days": 3}}}]},
    {"role": "tool", "content": "{\"temp\": 21.5}"},
    {"role": "user", "content": "thanks"},
]
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather \"now\"\tand later",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "default": 1}},
                   "required": ["city"]}}}]
CONTEXT = {"messages": MESSAGES, "tools": TOOLS, "add_generation_prompt": True, "bos_token": "<s>",
           "eos_token": "</s>"}

# Templates in Gemma's turn format (<start_of_turn>user|model ... <end_of_turn>), written for this project with the
# features Gemma 2's and Gemma 3's published templates rely on: a refused system role (2) or one folded into the first
# user turn (3), strict alternation, content given as parts, trim and raise_exception.
GEMMA2 = """
{%- if messages and messages[0]['role'] == 'system' -%}
    {{ raise_exception('this model takes no system message') }}
{%- endif -%}
{{- bos_token -}}
{%- for m in messages -%}
    {%- set expected = 'user' if loop.index0 % 2 == 0 else 'assistant' -%}
    {%- if m['role'] != expected -%}
        {{ raise_exception('turns must alternate, starting with the user') }}
    {%- endif -%}
    {{- '<start_of_turn>' + ('model' if m['role'] == 'assistant' else 'user') + '\n' + m['content'] | trim
        + '<end_of_turn>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<start_of_turn>model\n' -}}
{%- endif -%}
"""
GEMMA3 = """
{{- bos_token -}}
{%- set has_system = messages[0]['role'] == 'system' -%}
{%- if has_system -%}
    {%- set first = messages[0]['content'] -%}
    {%- set system_text = first if first is string else first[0]['text'] -%}
{%- endif -%}
{%- for m in (messages[1:] if has_system else messages) -%}
    {%- if (m['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception('turns must alternate, starting with the user') }}
    {%- endif -%}
    {{- '<start_of_turn>' + ('model' if m['role'] == 'assistant' else m['role']) + '\n' -}}
    {%- if loop.first and has_system -%}
        {{- system_text + '\n\n' -}}
    {%- endif -%}
    {%- if m['content'] is string -%}
        {{- m['content'] | trim -}}
    {%- elif m['content'] is iterable -%}
        {%- for part in m['content'] -%}
            {%- if part['type'] == 'image' -%}
                {{- '<start_of_image>' -}}
            {%- elif part['type'] == 'text' -%}
                {{- part['text'] | trim -}}
            {%- endif -%}
        {%- endfor -%}
    {%- else -%}
        {{ raise_exception('message content must be text or a list of parts') }}
    {%- endif -%}
    {{- '<end_of_turn>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<start_of_turn>model\n' -}}
{%- endif -%}
"""
GEMMA_CHAT = [
    {"role": "user", "content": "  Hi, Zürich 👋\n"},
    {"role": "assistant", "content": "Hello! How can I help?"},
    {"role": "user", "content": "Name a colour."},
]

# (name, template, extra context or None)
CASES = [
    # --- whitespace control: trim_blocks, lstrip_blocks, -, + ---
    ("ws_trim_blocks", "{% if true %}\nA\n{% endif %}\nB\n", None),
    ("ws_lstrip_blocks", "x\n    {% if true %}\n    y\n    {% endif %}\nz", None),
    ("ws_lstrip_not_after_text", "x {% if true %}y{% endif %} z", None),
    ("ws_plus_disables_lstrip", "a\n    {%+ if true %}b{% endif %}\n", None),
    ("ws_minus_both_sides", "a  \n  {%- if true -%}  \n  b  {%- endif %}\n  c", None),
    ("ws_print_minus", "a \n {{- 'x' -}} \n b", None),
    ("ws_print_no_lstrip", "a\n    {{ 'x' }}\n", None),
    ("ws_comment_trim", "a\n  {# note #}\nb {#- inner -#}  c", None),
    ("ws_plus_end_keeps_newline", "{% if true +%}\nkept{% endif %}", None),
    ("ws_keep_trailing_newline_off", "line\n", None),
    ("ws_crlf", "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\nc", None),
    ("raw_block", "{% raw %}{{ not evaluated }} {% if %}{% endraw %}|", None),
    ("raw_block_minus", "a  {%- raw -%}  {{x}}  {%- endraw -%}  b", None),
    # --- output spelled like Python str() ---
    ("repr_scalars", "{{ true }} {{ false }} {{ none }} {{ 1 }} {{ 1.0 }} {{ 2.50 }} {{ 1e20 }} {{ 1e-5 }} {{ 0.1 + 0.2 }} {{ 10 / 4 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 1e16 }} {{ 123456789.0 * 1000 }}", None),
    ("repr_containers", "{{ [1, 'a', none, true, 1.5] }} {{ {'k': 'v', 'n': [1]} }} {{ (1,) }} {{ (1, 'b') }} {{ () }} {{ \"it's\" }} {{ ['it\\'s', 'say \"hi\"', 'both \\' \"'] }} {{ ['tab\\there', 'nl\\n', 'back\\\\slash'] }}", None),
    ("repr_messages", "{{ messages[0] }}", None),
    ("repr_unicode", "{{ ['Zürich', '👋', '\\u00a0', '\\x07'] }}", None),
    # --- literals and escapes ---
    ("string_escapes", "{{ 'a\\tb\\nc\\\\d\\x41\\u00e9\\U0001F600\\q' }}|{{ \"dq'\" }}|{{ 'adj' 'acent' }}", None),
    ("numbers", "{{ 1_000 }} {{ 0.5 }} {{ 1.5e3 }} {{ -3 }} {{ +3 }} {{ 3 - -3 }}", None),
    # --- attribute / item access, undefined ---
    ("access_attr_and_item", "{{ messages[1].role }} {{ messages[1]['content'] }} {{ messages.1.role }} {{ messages[-1].content }}", None),
    ("access_missing_is_undefined", "[{{ messages[0].nope }}][{{ messages[0]['nope'] }}][{{ messages[99] }}][{{ nothing }}]", None),
    ("access_dict_method_wins", "{{ d.items is defined }} {{ d['items'] }} {{ d.get('x', 'dflt') }} {{ d.get('items') }}", {"d": {"items": 5}}),
    ("undefined_attr_errors", "{{ nothing.attr }}", None),
    ("undefined_nested_errors", "{{ messages[0].nope.deeper }}", None),
    ("undefined_arith_errors", "{{ nothing + 1 }}", None),
    ("undefined_semantics", "{{ nothing|length }} {{ nothing|list }} {% for x in nothing %}x{% else %}empty{% endfor %} {{ nothing is defined }} {{ nothing is undefined }} {{ 'y' if nothing else 'n' }} {{ nothing == nothing }} {{ nothing ~ 'tail' }} {{ nothing|default('d') }} {{ none|default('d') }} {{ ''|default('d', true) }} {{ ''|d('d2', boolean=true) }}", None),
    ("undefined_tests", "{{ nothing is iterable }} {{ nothing is sequence }} {{ nothing is none }} {{ nothing is string }} {{ 'x' in nothing }}", None),
    ("none_attr_is_undefined", "[{{ n.x }}] {{ n.x is defined }}", {"n": None}),
    ("undefined_tojson_errors", "{{ nothing|tojson }}", None),
    # --- slicing ---
    ("slice_lists", "{{ [1,2,3,4,5][::-1] }} {{ [1,2,3,4,5][1:] }} {{ [1,2,3,4,5][:-1] }} {{ [1,2,3,4,5][::2] }} {{ [1,2,3,4,5][-2:] }} {{ [1,2,3,4,5][4:1:-1] }} {{ [1,2,3][10:] }} {{ [1,2,3][-10:2] }}", None),
    ("slice_strings", "{{ 'héllo👋'[::-1] }} {{ 'hello'[1:3] }} {{ 'hello'[-1] }} {{ 'hello'[0] }} {{ 'a👋b'[1] }} {{ 'a👋b'|length }}", None),
    ("slice_messages_reverse", "{% for m in messages[::-1] %}{{ loop.index0 }}={{ m.role }} {% endfor %}", None),
    # --- operators ---
    ("arith_and_concat", "{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 'a' + 'b' }} {{ 'a' ~ 1 ~ none ~ true }} {{ [1] + [2] }} {{ 'ab' * 2 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 5 % 3 }} {{ 5.5 // 2 }} {{ 1 / 3 }}", None),
    ("comparisons", "{{ 1 < 2 }} {{ 1 == 1.0 }} {{ 'a' != 'b' }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'b' >= 'a' }} {{ [1, 2] < [1, 3] }} {{ true == 1 }} {{ none == none }}", None),
    ("membership", "{{ 'ell' in 'hello' }} {{ 2 in [1, 2] }} {{ 'role' in messages[0] }} {{ 'x' not in messages[0] }} {{ 'tool_calls' in messages[2] }} {{ not 'a' in 'abc' }}", None),
    ("logic", "{{ true and 'yes' }} {{ false or 'fallback' }} {{ 0 or '' or none }} {{ not none }} {{ not (1 and 0) }} {{ '' and 'x' }}|", None),
    ("inline_if", "{{ 'a' if true else 'b' }} {{ 'a' if false else 'b' }} [{{ 'a' if false }}] {{ 'x' if false else 'y' if true else 'z' }}", None),
    ("not_is_defined", "{% if not tools is defined %}undef{% else %}def{% endif %} {% if not nothing is defined %}undef{% endif %} {{ not messages[0].x is defined }}", None),
    ("add_str_int_errors", "{{ 'a' + 1 }}", None),
    ("percent_format", "{{ '%s-%d' % ('a', 3) }} {{ '%05.2f|%x|%r' % (3.14159, 255, 'q') }} {{ 'solo %s' % 'x' }}", None),
    # --- tests ---
    ("tests_types", "{{ 'a' is string }} {{ 1 is number }} {{ 1.5 is number }} {{ true is number }} {{ 1 is integer }} {{ true is integer }} {{ 1.0 is float }} {{ true is boolean }} {{ {} is mapping }} {{ [] is mapping }} {{ [] is iterable }} {{ 'x' is iterable }} {{ 1 is iterable }} {{ [] is sequence }} {{ {} is sequence }} {{ none is none }} {{ range is callable }}", None),
    ("tests_values", "{{ true is true }} {{ 1 is true }} {{ false is false }} {{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(2) }} {{ 2 is in [1, 2] }} {{ 'a' is eq 'a' }} {{ 'a' is equalto('b') }} {{ 1 is ne 2 }} {{ 3 is gt 2 }} {{ 3 is lt 2 }} {{ 3 is ge 3 }} {{ 2 is le 1 }} {{ none is sameas none }} {{ 'abc' is lower }} {{ 'ABC' is upper }}", None),
    ("tests_negated", "{{ none is not none }} {{ 1 is not string }} {{ messages is not mapping }} {{ x is not defined }}", None),
    # --- for loops ---
    ("loop_vars", "{% for m in messages %}[{{ loop.index }},{{ loop.index0 }},{{ loop.first }},{{ loop.last }},{{ loop.length }},{{ loop.revindex }},{{ loop.revindex0 }},{{ loop.previtem.role if loop.previtem is defined else '-' }},{{ loop.nextitem.role if loop.nextitem is defined else '-' }}]{% endfor %}", None),
    ("loop_filter_and_else", "{% for m in messages if m.role == 'user' %}{{ loop.index }}/{{ loop.length }}:{{ m.content }};{% endfor %}{% for m in messages if m.role == 'nobody' %}x{% else %}none{% endfor %}", None),
    ("loop_break_continue", "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}", None),
    ("loop_unpack_items", "{% for k, v in tools[0].function.parameters.properties.items() %}{{ k }}={{ v.type }};{% endfor %}{% for k, v in {'a': 1, 'b': 2}|items %}{{ k }}{{ v }}{% endfor %}", None),
    ("loop_over_dict_and_string", "{% for k in messages[0] %}{{ k }},{% endfor %} {% for c in 'a👋' %}[{{ c }}]{% endfor %}", None),
    ("loop_nested", "{% for a in [1, 2] %}{% for b in ['x', 'y'] %}{{ a }}{{ b }}{{ loop.index }}{% endfor %}{{ loop.index }};{% endfor %}", None),
    ("loop_scope", "{% set x = 0 %}{% for i in [1, 2] %}{{ x }}{% set x = i %}{{ x }}{% endfor %}{{ x }}", None),
    ("loop_cycle", "{% for i in range(5) %}{{ loop.cycle('a', 'b') }}{% endfor %}", None),
    ("loop_none_errors", "{% for x in n %}{% endfor %}", {"n": None}),
    ("range_forms", "{{ range(3)|list }} {{ range(1, 4)|list }} {{ range(10, 0, -3)|list }}", None),
    # --- set, namespace, macros, blocks ---
    ("set_and_namespace", "{% set ns = namespace(count=0, seen=[]) %}{% for m in messages %}{% set ns.count = ns.count + 1 %}{% endfor %}{{ ns.count }} {% set a, b = 1, 2 %}{{ a }}{{ b }} {% set t = (3, 4) %}{% set c, d = t %}{{ c + d }}", None),
    ("set_block", "{% set greeting %}Hello {{ messages[1].role }}!{% endset %}[{{ greeting }}] {% set shout | upper %}quiet {{ 1 }}{% endset %}{{ shout }}", None),
    ("set_in_if_visible", "{% if true %}{% set v = 'inside' %}{% endif %}{{ v }}", None),
    ("macro_defaults", "{% macro tag(name, kind='tool', sep=': ') %}<{{ kind }}{{ sep }}{{ name }}>{% endmacro %}{{ tag('a') }}{{ tag('b', 'fn') }}{{ tag('c', sep='=') }}{{ tag(name='d') }}", None),
    ("macro_recursive_render", "{% macro render(v) %}{% if v is mapping %}{% for k, x in v.items() %}{{ k }}({{ render(x) }}){% endfor %}{% elif v is iterable and v is not string %}{% for x in v %}{{ render(x) }},{% endfor %}{% else %}{{ v }}{% endif %}{% endmacro %}{{ render(tools[0].function.parameters) }}", None),
    ("filter_block", "{% filter upper %}shout {{ 'this' }}{% endfilter %}|{% filter trim %}   padded   {% endfilter %}|", None),
    ("with_block", "{% with a = 1, b = 'x' %}{{ a }}{{ b }}{% endwith %}[{{ a }}]", None),
    ("generation_block", "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}{% endif %}{% endfor %}", None),
    ("dict_global", "{{ dict(a=1, b='x') }} {{ dict([('k', 'v')]) }} {{ {'a': 1}.keys()|list }} {{ {'a': 1}.values()|list }}", None),
    ("raise_exception", "{% if messages|length > 2 %}{{ raise_exception('Too many messages: ' ~ messages|length) }}{% endif %}", None),
    ("list_append_refused", "{% set l = [] %}{% set _ = l.append(1) %}{{ l }}", None),
    ("dict_update_refused", "{% set d = {} %}{% set _ = d.update({'a': 1}) %}{{ d }}", None),
    ("ns_assign_non_namespace_errors", "{% set d = {} %}{% set d.x = 1 %}", None),
    ("syntax_error_unclosed", "{% if true %}never closed", None),
    ("syntax_error_unknown_tag", "{% frobnicate %}", None),
    # --- filters ---
    ("tojson_plain", "{{ tools|tojson }}", None),
    ("tojson_indent", "{{ tools[0]|tojson(indent=2) }}\n{{ {'e': [], 'd': {}, 'f': 1.0, 'n': none, 'b': false}|tojson(indent=4) }}", None),
    ("tojson_options", "{{ {'b': 1, 'a': [1, 2]}|tojson(sort_keys=true) }} {{ {'b': 1, 'a': [1, 2]}|tojson(separators=(',', ':')) }} {{ 'Zürich'|tojson(ensure_ascii=true) }} {{ 'x'|tojson(indent='\\t') }} {{ [1, [2]]|tojson(indent='\\t') }}", None),
    ("tojson_strings", "{{ ['q\"uote', 'back\\\\', 'nl\\n', 'ctl\\x01', 'tab\\t', '\\x7f', 'é👋', '</script>'] | tojson }}", None),
    ("tojson_numbers", "{{ [1, 1.0, 0.1, 1e20, 1e-7, -0.0, 3.14, 100000000000000000.0, true, none] | tojson }}", None),
    ("tojson_message_arguments", "{% for m in messages if m.tool_calls %}{{ m.tool_calls[0].function.arguments|tojson }}{% endfor %}", None),
    ("string_filters", "{{ '  pad  '|trim }}|{{ 'xxhixx'|trim('x') }}|{{ 'MiXed'|upper }}|{{ 'MiXed'|lower }}|{{ 'hello wORLD-foo (bar'|title }}|{{ 'hELLO world'|capitalize }}|{{ 'a-b-a'|replace('a', 'o') }}|{{ 'a-b-a'|replace('a', 'o', 1) }}|{{ 'one two  three'|wordcount }}|{{ 'x'|string }}|{{ 42|string ~ '!' }}", None),
    ("length_first_last_join", "{{ messages|length }} {{ messages|count }} {{ 'abc'|length }} {{ (messages|first).role }} {{ (messages|last).role }} {{ 'abc'|first }} {{ 'abc'|last }} {{ [1, 2, 3]|join }} {{ [1, 2, 3]|join(', ') }} {{ messages|join('|', attribute='role') }}", None),
    ("list_and_numbers", "{{ 'abc'|list }} {{ {'a': 1}|list }} {{ '42'|int + 1 }} {{ '4.7'|int }} {{ 'x'|int }} {{ 'x'|int(7) }} {{ 3.9|int }} {{ '2.5'|float }} {{ 2|float }} {{ 'no'|float }} {{ -3|abs }} {{ -2.5|abs }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }} {{ 2.1|round(0, 'ceil') }} {{ 2.9|round(method='floor') }} {{ 7|round }}", None),
    ("items_and_dictsort", "{% for k, v in {'b': 2, 'A': 1, 'c': 0}|dictsort %}{{ k }}{{ v }} {% endfor %}| {% for k, v in {'b': 2, 'A': 1, 'c': 0}|dictsort(by='value', reverse=true) %}{{ k }}{% endfor %} | {% for k, v in {'b': 2, 'A': 1}|dictsort(true) %}{{ k }}{% endfor %}", None),
    ("select_reject_attr", "{{ messages|selectattr('role', 'equalto', 'user')|map(attribute='content')|list }} {{ messages|rejectattr('role', 'in', ['user', 'assistant'])|map(attribute='role')|list }} {{ messages|selectattr('tool_calls')|list|length }} {{ messages|selectattr('tool_calls', 'defined')|list|length }} {{ messages|rejectattr('tool_calls', 'defined')|list|length }}", None),
    ("select_reject", "{{ [0, 1, 2, 3, '', 'x']|select|list }} {{ [1, 2, 3, 4]|select('odd')|list }} {{ [1, 2, 3, 4]|reject('odd')|list }} {{ [1, 5, 9]|select('gt', 4)|list }} {{ ['code_interpreter', 'web']|reject('equalto', 'code_interpreter')|join(', ') }}", None),
    ("map_filters", "{{ ['a', 'b']|map('upper')|list }} {{ messages|map(attribute='nope', default='?')|list }} {{ tools|map(attribute='function.name')|list }} {{ [[1, 2], [3]]|map('length')|list }} {{ messages|map(attribute='role')|unique|list }} {{ ['a', 'A', 'b']|unique|list }} {{ ['a', 'A', 'b']|unique(case_sensitive=true)|list }}", None),
    ("sort_reverse", "{{ [3, 1, 2]|sort }} {{ [3, 1, 2]|sort(reverse=true) }} {{ ['b', 'A', 'c']|sort }} {{ ['b', 'A', 'c']|sort(case_sensitive=true) }} {{ messages|sort(attribute='role')|map(attribute='role')|join(',') }} {{ [1, 2, 3]|reverse|list }} {{ 'abc'|reverse }} {{ [3, 1]|min }} {{ [3, 1]|max }} {{ [1, 2, 3]|sum }} {{ messages|map(attribute='content')|map('length')|sum }}", None),
    ("safe_escape_indent", "{{ '<b>'|safe }} {{ '<b>&\"\\''|e }} {{ '<i>'|escape }} {{ ('<a>'|e) + '<b>' }} {{ '<a>'|e ~ '<b>' }}|{{ 'l1\\nl2\\n\\nl3'|indent }}|{{ 'l1\\nl2'|indent(2, true) }}|{{ 'l1\\n\\nl2'|indent(width='>', blank=true) }}|", None),
    ("batch_and_misc", "{{ [1, 2, 3, 4, 5]|batch(2)|list }} {{ [1, 2, 3]|batch(2, 0)|list }} {{ 'x'|center(5) }}|{{ messages[0]|attr('role') }}", None),
    ("unknown_filter_errors", "{{ 'x'|frobnicate }}", None),
    ("nested_braces_in_print", "{{ {'a': {'b': [1, {'c': 2}]}} }}{{ {'x': 1}['x'] }}", None),
    ("multiline_tags", "{%- if messages\n      and tools -%}\n  yes\n{%- endif -%}\n{{\n  'done'\n}}", None),
    ("indented_template_style", "{%- for m in messages %}\n    {%- if m.role == 'user' %}\n        {{- '<u>' + m.content + '</u>\\n' }}\n    {%- elif m.role == 'system' %}\n        {{- m.content|trim }}\n    {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n    {{- '<a>' }}\n{%- endif %}\n", None),
    # --- Python string methods ---
    ("str_strip_family", "[{{ '  a  '.strip() }}][{{ 'xxaxx'.strip('x') }}][{{ '\\n\\nab\\n'.lstrip('\\n') }}][{{ 'ab\\n\\n'.rstrip('\\n') }}][{{ '  a  '.lstrip() }}][{{ '  a  '.rstrip() }}][{{ '\\u00a0a\\u3000'.strip() }}]", None),
    ("str_starts_ends", "{{ 'hello'.startswith('he') }} {{ 'hello'.endswith('lo') }} {{ 'hello'.startswith(('x', 'h')) }} {{ 'hello'.endswith(('x', 'y')) }} {{ '<tool_response>x</tool_response>'.startswith('<tool_response>') and '<tool_response>x</tool_response>'.endswith('</tool_response>') }}", None),
    ("str_split", "{{ 'a,b,,c'.split(',') }} {{ '  a  b c '.split() }} {{ 'a,b,c'.split(',', 1) }} {{ 'a,b,c'.rsplit(',', 1) }} {{ ' a b c '.rsplit(None, 1) }} {{ 'x</think>y</think>z'.split('</think>')[-1] }} {{ 'a b'.split(maxsplit=0) }} {{ 'l1\\nl2\\r\\nl3\\n'.splitlines() }}", None),
    ("str_case_and_search", "{{ 'hello world'.title() }} {{ \"they're bill's\".title() }} {{ 'hELLO'.capitalize() }} {{ 'Ab'.upper() }}{{ 'Ab'.lower() }} {{ 'banana'.replace('a', 'o') }} {{ 'banana'.replace('a', 'o', 2) }} {{ 'banana'.find('n') }} {{ 'banana'.rfind('n') }} {{ 'banana'.find('z') }} {{ 'banana'.count('a') }} {{ '-'.join(['a', 'b']) }} {{ 'banana'.index('nan') }}", None),
    ("str_format_and_is", "{{ '{} and {}'.format('a', 1) }} {{ '{0}{0}{name}'.format('x', name='y') }} {{ '{{literal}}'.format() }} {{ '123'.isdigit() }} {{ 'abc'.isalpha() }} {{ ' '.isspace() }} {{ 'ab'.islower() }} {{ 'AB'.isupper() }} {{ '7'.zfill(3) }} {{ 'a=b'.partition('=') }}", None),
    ("str_method_on_undefined_errors", "{{ messages[0].nope.strip() }}", None),
    ("dict_and_list_methods", "{{ messages[0].get('role') }} {{ messages[0].get('nope') }} {{ messages[0].get('nope', 'dflt') }} {{ messages[0].keys()|list }} {{ messages[0].items()|list }} {{ [1, 2, 3].index(2) }} {{ [1, 2, 2].count(2) }}", None),
    # --- Gemma's turn format (templates above, written here): system role refused (2) or folded into the first user
    # turn (3), strict alternation by loop.index0, loop.first, list slicing, inline if/else, is string / is iterable,
    # content parts, trim, raise_exception ---
    ("gemma2_turns", GEMMA2, {"messages": GEMMA_CHAT}),
    ("gemma2_no_generation_prompt", GEMMA2, {"messages": GEMMA_CHAT[:2], "add_generation_prompt": False,
                                             "bos_token": "<bos>"}),
    ("gemma2_system_raises", GEMMA2, {"messages": [{"role": "system", "content": "Be brief."}] + GEMMA_CHAT}),
    ("gemma2_roles_must_alternate", GEMMA2, {"messages": GEMMA_CHAT[:1] + GEMMA_CHAT[:1]}),
    ("gemma3_turns", GEMMA3, {"messages": GEMMA_CHAT}),
    ("gemma3_system_prefix", GEMMA3, {"messages": [{"role": "system", "content": "Be brief."}] + GEMMA_CHAT,
                                      "bos_token": "<bos>"}),
    ("gemma3_content_parts", GEMMA3, {"messages": [
        {"role": "system", "content": [{"type": "text", "text": "Answer in French."}]},
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "  What is this?  "}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Un chat."}]},
        {"role": "user", "content": "Merci"}]}),
    ("gemma3_roles_must_alternate", GEMMA3, {"messages": [{"role": "assistant", "content": "first"}]}),
    ("gemma3_invalid_content_raises", GEMMA3, {"messages": [{"role": "user", "content": None}]}),
    # --- globals ---
    ("strftime_now_shape", "{{ strftime_now('%Y')|length }} {{ strftime_now('%d %b %Y')|length > 9 }}", None),
    ("extra_kwargs", "{% if enable_thinking is defined and enable_thinking is false %}no-think{% endif %} {{ documents is none }} {{ custom }}", {"enable_thinking": False, "documents": None, "custom": "c"}),
]


def render(template, extra):
    context = dict(CONTEXT)
    if extra:
        context.update(extra)
    try:
        return {"expected": _compile_jinja_template(template).render(**context)}
    except Exception as e:  # noqa: BLE001 - any template error must be an error in Java too
        return {"exception": f"{type(e).__name__}: {e}"}


def main():
    out = {"context": CONTEXT, "cases": []}
    names = set()
    for name, template, extra in CASES:
        assert name not in names, name
        names.add(name)
        case = {"name": name, "template": template}
        if extra:
            case["extra"] = extra
        case.update(render(template, extra))
        out["cases"].append(case)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {len(out['cases'])} cases to {os.path.normpath(OUT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
