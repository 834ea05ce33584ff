"""Where JavaScript's, TypeScript's and TSX's uses of names are: their queries and switches.

Part of :mod:`.specs` (one tree-sitter query per language), apart for its
size: the three share a query, TypeScript adds its types, its functions as
scopes of their own (:mod:`.scoping`) and its callbacks typed by where they
stand (:mod:`.contextual`).
"""

from __future__ import annotations

from repolens.chunking.refs import contextual, imports
from repolens.chunking.refs.extracting import RefSpec
from repolens.chunking.refs.scoping import javascript_span


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_JS_BUILTINS = _words(
    "console Object Array JSON Math Promise String Number Boolean Error TypeError Symbol Map Set WeakMap "
    "WeakSet Date RegExp require module exports window document globalThis undefined null parseInt "
    "parseFloat isNaN setTimeout clearTimeout setInterval clearInterval process Buffer arguments "
    "Reflect Proxy BigInt Uint8Array ArrayBuffer Intl encodeURIComponent decodeURIComponent fetch "
    "Response Request Headers URL URLSearchParams string number boolean any unknown void never object "
    "Record Partial Readonly Pick Omit Exclude Extract ReturnType Parameters Awaited NonNullable "
    "Required InstanceType Iterable AsyncIterable PromiseLike ReadonlyArray"
)

_JS_COMMON = """
(call_expression function: (identifier) @call)
(call_expression function: (member_expression property: (property_identifier) @call))
(new_expression constructor: (identifier) @call)
(new_expression constructor: (member_expression property: (property_identifier) @call))
(member_expression property: (property_identifier) @attr)
(decorator (identifier) @decorator)
(decorator (member_expression property: (property_identifier) @decorator))
(decorator (call_expression function: (identifier) @decorator))
(decorator (call_expression function: (member_expression property: (property_identifier) @decorator)))
(arguments (identifier) @name)
(variable_declarator value: (identifier) @name)
(assignment_expression right: (identifier) @name)
(return_statement (identifier) @name)
(array (identifier) @name)
(pair value: (identifier) @name)
(shorthand_property_identifier) @name
(binary_expression right: (identifier) @name)
(member_expression object: (identifier) @name)
(variable_declarator name: (identifier) @bind)
(lexical_declaration (variable_declarator name: (identifier) @bind.block))
(arrow_function parameter: (identifier) @bind)
(object_pattern (shorthand_property_identifier_pattern) @bind)
(array_pattern (identifier) @bind)
(catch_clause parameter: (identifier) @bind.block)
(for_in_statement left: (identifier) @bind.block)
(import_statement) @import
(export_statement) @import
(variable_declarator value: (call_expression function: (identifier) @_r arguments: (arguments (string)))
  (#eq? @_r "require")) @import
(variable_declarator name: (identifier) value: (new_expression)) @typed
(assignment_expression left: (member_expression object: (this)) right: (new_expression)) @typed
(assignment_expression left: (member_expression object: (this)) right: (identifier)) @typed
(arrow_function) @function
(function_expression) @function
(function_declaration) @function
(generator_function) @function
(generator_function_declaration) @function
(method_definition) @function
"""

_JSX = """
(jsx_opening_element name: (identifier) @call (#not-match? @call "^[a-z]"))
(jsx_self_closing_element name: (identifier) @call (#not-match? @call "^[a-z]"))
(jsx_opening_element name: (member_expression property: (property_identifier) @call))
(jsx_self_closing_element name: (member_expression property: (property_identifier) @call))
"""

_JS_ONLY = """
(class_heritage (identifier) @base)
(class_heritage (member_expression property: (property_identifier) @base))
(formal_parameters (identifier) @bind)
(formal_parameters (assignment_pattern left: (identifier) @bind))
"""

_TS_EXTRA = """
(extends_clause value: (identifier) @base)
(extends_clause value: (member_expression property: (property_identifier) @base))
(implements_clause (type_identifier) @base)
(implements_clause (generic_type name: (type_identifier) @base))
(implements_clause (generic_type name: (nested_type_identifier name: (type_identifier) @base)))
(extends_type_clause type: (generic_type name: (type_identifier) @base))
(extends_type_clause type: (type_identifier) @base)
(type_identifier) @type
(type_query (identifier) @name)
(class_declaration name: (type_identifier) @skip)
(abstract_class_declaration name: (type_identifier) @skip)
(interface_declaration name: (type_identifier) @skip)
(type_alias_declaration name: (type_identifier) @skip)
(type_parameter name: (type_identifier) @skip)
(required_parameter pattern: (identifier) @bind)
(required_parameter pattern: (rest_pattern (identifier) @bind))
(optional_parameter pattern: (identifier) @bind)
(variable_declarator name: (identifier) type: (type_annotation)) @typed
(variable_declarator name: (identifier) value: (as_expression)) @typed
(required_parameter pattern: (identifier) type: (type_annotation)) @typed
(optional_parameter pattern: (identifier) type: (type_annotation)) @typed
(public_field_definition name: [(property_identifier) (private_property_identifier)]
  type: (type_annotation)) @typed
(public_field_definition name: [(property_identifier) (private_property_identifier)]
  value: (new_expression)) @typed
(property_signature name: (property_identifier) type: (type_annotation)) @typed
(type_alias_declaration) @alias
(interface_body) @signatures
(object_type) @signatures
(object) @object
(for_in_statement left: (identifier)) @each
(variable_declarator
  value: (await_expression (call_expression function: (import) arguments: (arguments (string))))) @import
(variable_declarator name: (object_pattern) value: [(identifier) (member_expression) (this)]) @destructured
(extends_clause value: (call_expression function: (identifier))) @dynamic
(variable_declarator name: (identifier)
  value: [(call_expression) (await_expression) (non_null_expression)]) @made
(function_type) @function
(call_signature) @function
(construct_signature) @function
(method_signature) @function
(abstract_method_signature) @function
"""

_JS_TYPED = (("name", "type"), ("name", "value"), ("pattern", "type"), ("left", "right"))
# A callback is a scope of its own locals (its typed ones too): see :mod:`.scoping`.
_JS_SWITCHES = {
    "builtins": _JS_BUILTINS,
    "typed_fields": _JS_TYPED,
    "block_scopes": True,
    "function_scopes": True,
    "bind_span": javascript_span,
    # a chain breaks its lines before a dot (a comment's "set." is no receiver of the next line)
    "dots_lead_lines": True,
    "private_members": True,  # this.#x.name: the private field's member
}
JAVASCRIPT = RefSpec("javascript", _JS_COMMON + _JS_ONLY + _JSX, imports.javascript, **_JS_SWITCHES)
_TS_RULES = (contextual.contextual,)  # a callback's parameters typed by where it stands
_TS_SWITCHES = {**_JS_SWITCHES, "rules": _TS_RULES, "field_paths": True, "array_elements": True}
TYPESCRIPT = RefSpec("typescript", _JS_COMMON + _TS_EXTRA, imports.javascript, **_TS_SWITCHES)
TSX = RefSpec("tsx", _JS_COMMON + _TS_EXTRA + _JSX, imports.javascript, **_TS_SWITCHES)
