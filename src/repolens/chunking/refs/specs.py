"""Where each language's uses of names are: one tree-sitter query per language.

The capture names are those of :mod:`repolens.chunking.refs.extract`. A
language's query lists the nodes where a use stands (the callee of a call,
a member access, a type, a base class, a decorator), the nodes that bind a
name locally, and its import statements, which :mod:`.imports` reads.
Every language with a grammar (:data:`repolens.chunking.grammars.SPECS`)
has an entry; ``tests/chunking/test_refs.py`` compiles each query.
"""

from __future__ import annotations

import builtins

from repolens.chunking.refs import cpp_types, declared, fixtures, imports, python_types, rust_types
from repolens.chunking.refs.extracting import RefSpec
from repolens.chunking.refs.javascript import JAVASCRIPT, TSX, TYPESCRIPT
from repolens.chunking.refs.scoping import go_span, python_span, ruby_span, rust_span


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PY_BUILTINS = frozenset(n for n in dir(builtins) if not n.startswith("__")) | {"self", "cls", "super"}

PYTHON = RefSpec(
    "python",
    """
(call function: (identifier) @call)
(call function: (attribute attribute: (identifier) @call))
(attribute attribute: (identifier) @attr)
(decorator (identifier) @decorator)
(decorator (attribute attribute: (identifier) @decorator))
(decorator (call function: (identifier) @decorator))
(decorator (call function: (attribute attribute: (identifier) @decorator)))
(class_definition superclasses: (argument_list (identifier) @base))
(class_definition superclasses: (argument_list (attribute attribute: (identifier) @base)))
(type (identifier) @type)
(type (attribute attribute: (identifier) @type))
(generic_type (identifier) @type)
(argument_list (identifier) @name)
(keyword_argument value: (identifier) @name)
(assignment right: (identifier) @name)
(return_statement (identifier) @name)
(list (identifier) @name)
(tuple (identifier) @name)
(pair value: (identifier) @name)
(comparison_operator (identifier) @name)
(attribute object: (identifier) @name)
(parameters (identifier) @bind)
(lambda_parameters (identifier) @bind.block)
(default_parameter name: (identifier) @bind)
(typed_parameter (identifier) @bind)
(typed_default_parameter name: (identifier) @bind)
(list_splat_pattern (identifier) @bind)
(dictionary_splat_pattern (identifier) @bind)
(assignment left: (identifier) @bind)
(assignment left: (pattern_list (identifier) @bind))
(assignment left: (tuple_pattern (identifier) @bind))
(augmented_assignment left: (identifier) @bind)
(for_statement left: (identifier) @bind)
(for_statement left: (pattern_list (identifier) @bind))
(for_in_clause left: (identifier) @bind.block)
(for_in_clause left: (pattern_list (identifier) @bind.block))
(as_pattern_target (identifier) @bind)
(named_expression name: (identifier) @bind)
(import_statement) @import
(import_from_statement) @import
(assignment left: (identifier) right: (call)) @typed
(assignment left: (identifier) type: (type)) @typed
(assignment left: (attribute object: (identifier)) right: (call)) @typed
(assignment left: (attribute object: (identifier)) type: (type)) @typed
(assignment left: (attribute object: (identifier)) right: (identifier)) @typed
(typed_parameter) @typed
(typed_default_parameter) @typed
(assignment left: (identifier) right: [(attribute) (identifier)]) @typed.read
(with_item value: (as_pattern (call) alias: (as_pattern_target (identifier)))) @typed.with
(binary_operator (identifier) @name)
(boolean_operator (identifier) @name)
(not_operator argument: (identifier) @name)
(assert_statement (identifier) @name)
(delete_statement (identifier) @name)
(subscript value: (identifier) @name)
(for_statement right: (identifier) @name)
(if_statement condition: (identifier) @name)
(function_definition return_type: (type) @returns)
(return_statement (call function: [(identifier) (attribute)] @returns))
(return_statement (identifier) @returns)
(function_definition name: (identifier) @test (#match? @test "^test"))
""",
    imports.python,
    self_names=frozenset({"self", "cls"}),
    super_names=frozenset({"super()"}),
    builtins=_PY_BUILTINS,
    typed_fields=(("left", "type"), ("left", "right"), ("name", "type"), ("", "type")),
    call_results=True,
    field_paths=True,
    rules=(python_types.extend, fixtures.fixtures, python_types.later_locals),
    dots_lead_lines=True,
    bind_span=python_span,
    arrow_members=False,  # -> only ever announces what a function returns
)


_GO_BUILTINS = _words(
    "append cap close complex copy delete imag len make new panic print println real recover min max clear "
    "bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint "
    "uint8 uint16 uint32 uint64 uintptr any comparable nil true false iota _"
)

GO = RefSpec(
    "go",
    """
(call_expression function: (identifier) @call)
(call_expression function: (selector_expression field: (field_identifier) @call))
(composite_literal type: (type_identifier) @call)
(composite_literal type: (qualified_type name: (type_identifier) @call))
(selector_expression field: (field_identifier) @attr)
(type_identifier) @type
(argument_list (identifier) @name)
(keyed_element value: (literal_element (identifier) @name))
(literal_value (literal_element (identifier) @name))
(expression_list (identifier) @name)
(parenthesized_expression (unary_expression operand: (identifier) @name))
(type_spec name: (type_identifier) @skip)
(type_parameter_declaration name: (identifier) @skip)
(parameter_declaration name: (identifier) @bind.block)
(variadic_parameter_declaration name: (identifier) @bind)
(type_switch_statement alias: (expression_list (identifier) @bind.block))
(receive_statement left: (expression_list (identifier) @bind.block))
(short_var_declaration left: (expression_list (identifier) @bind.block))
(var_spec name: (identifier) @bind.block)
(range_clause left: (expression_list (identifier) @bind.block))
(method_declaration receiver: (parameter_list (parameter_declaration name: (identifier) @self)))
(import_declaration) @import
(parameter_declaration name: (identifier) type: (_)) @typed
(var_spec name: (identifier)) @typed
(field_declaration name: (field_identifier) type: (_)) @typed
(short_var_declaration) @typed
(range_clause) @typed
(method_elem) @typed
(field_declaration !name type: (type_identifier) @base)
(field_declaration !name type: (qualified_type name: (type_identifier) @base))
(type_elem (type_identifier) @base)
(type_elem (qualified_type name: (type_identifier) @base))
(function_declaration result: (_)) @typed
(method_declaration result: (_)) @typed
""",
    imports.go,
    self_names=frozenset(),
    super_names=frozenset(),
    builtins=_GO_BUILTINS,
    package=True,
    typed_fields=(("name", "type"), ("name", "value"), ("left", "right"), ("name", "result")),
    package_members=True,
    call_results=True,
    block_scopes=True,
    bind_span=go_span,
)

_RUST_BUILTINS = _words(
    "Some None Ok Err Box Vec String Option Result Self i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 "
    "usize f32 f64 bool char str println format vec assert assert_eq panic write writeln Default Clone "
    "Debug Copy PartialEq Eq Hash Iterator From Into"
)

# A macro's arguments are a token tree, not code: a call in one (``f(..)``, ``x.f(..)``) is a
# name followed by a parenthesized tree, a member a name after a dot, looked for this many
# trees deep (an attribute's arguments, ``#[cfg(not(unix))]``, and a macro's definition are no code).
_RUST_MACRO_DEPTH = 4
_RUST_MACRO_USES = "".join(
    f"(macro_invocation {'(token_tree ' * depth}(identifier) @call . (token_tree) @_args"
    f' (#match? @_args "^[(]"){")" * depth})\n'
    f'(macro_invocation {"(token_tree " * depth}"." . (identifier) @attr{")" * depth})\n'
    for depth in range(1, _RUST_MACRO_DEPTH + 1)
)

RUST = RefSpec(
    "rust",
    _RUST_MACRO_USES
    + """
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
(call_expression function: (scoped_identifier name: (identifier) @call))
(call_expression function: (generic_function function: (field_expression field: (field_identifier) @call)))
(macro_invocation macro: (identifier) @call)
(struct_expression name: (type_identifier) @call)
(field_expression field: (field_identifier) @attr)
(scoped_identifier name: (identifier) @attr)
((scoped_identifier path: (identifier) @type) (#match? @type "^[A-Z]"))
(type_identifier) @type
(impl_item trait: (type_identifier) @base)
(attribute_item (attribute (identifier) @decorator))
(arguments (identifier) @name)
(token_tree (identifier) @name)
(struct_item name: (type_identifier) @skip)
(enum_item name: (type_identifier) @skip)
(trait_item name: (type_identifier) @skip)
(type_item name: (type_identifier) @skip)
(type_parameter name: (type_identifier) @skip)
(parameters (parameter pattern: (identifier) @bind))
(let_declaration pattern: (identifier) @bind.block)
(closure_parameters (identifier) @bind.block)
(closure_parameters (parameter pattern: (identifier) @bind.block))
(use_declaration) @import
(mod_item !body) @import
(let_declaration pattern: (identifier) type: (_)) @typed
(function_item return_type: (_)) @result
(let_declaration pattern: (identifier) !type value: [(call_expression) (struct_expression) (try_expression)])
  @made
(for_expression pattern: (identifier) value: (_)) @looped
(struct_item body: (field_declaration_list (field_declaration) @field.typed))
(parameter pattern: (identifier) type: (_)) @param.typed
(field_expression value: [(call_expression) (try_expression)]) @chained
""",
    imports.rust,
    self_names=frozenset({"self", "Self"}),
    super_names=frozenset(),
    builtins=_RUST_BUILTINS,
    typed_fields=(("pattern", "type"),),
    block_scopes=True,
    bind_span=rust_span,
    module_path=imports.rust_module_path,
    arrow_members=False,
    rules=(
        rust_types.results,
        rust_types.struct_fields,
        rust_types.parameters,
        rust_types.made,
        rust_types.loops,
        rust_types.chains,
    ),
    shadowing_lets=True,
    result_type=rust_types.result_type,
    field_access=True,
)

_JAVA_BUILTINS = _words(
    "String Object Integer Long Double Float Boolean Character Byte Short Math System List Map Set "
    "ArrayList HashMap HashSet Arrays Collections Override Deprecated SuppressWarnings Exception "
    "RuntimeException IllegalArgumentException IllegalStateException Class Iterable Iterator Void "
    "StringBuilder Optional Objects Thread Runnable Comparable int long double float boolean char byte "
    "short void var"
)

# java.lang's types the list above leaves out (Java sees them in every file; Kotlin on the JVM
# too): Java's and Kotlin's only, not Scala's or Groovy's.
_JAVA_LANG = _words(
    "Number CharSequence StringBuffer Throwable Error AssertionError NullPointerException "
    "UnsupportedOperationException IndexOutOfBoundsException ArrayIndexOutOfBoundsException "
    "StringIndexOutOfBoundsException ClassCastException ArithmeticException NumberFormatException "
    "NegativeArraySizeException ArrayStoreException InterruptedException CloneNotSupportedException "
    "SecurityException ReflectiveOperationException ClassNotFoundException NoSuchMethodException "
    "NoSuchFieldException IllegalAccessException InstantiationException IllegalMonitorStateException "
    "OutOfMemoryError StackOverflowError LinkageError NoClassDefFoundError ExceptionInInitializerError "
    "VirtualMachineError InternalError Cloneable AutoCloseable Enum Runtime StrictMath ThreadLocal "
    "InheritableThreadLocal ClassLoader StackTraceElement Appendable Readable FunctionalInterface "
    "SafeVarargs"
)

# What every Kotlin file sees without an import (its default imports: kotlin.*, kotlin.annotation.*,
# kotlin.collections.*, kotlin.comparisons.*, kotlin.io.*, kotlin.ranges.*, kotlin.sequences.*,
# kotlin.text.*, kotlin.jvm.*, java.lang.*): their public types (never a package's) ...
_KOTLIN_TYPES = _words(
    # kotlin.*
    "Any Nothing Unit Boolean Byte Short Int Long Float Double Char String CharSequence Number "
    "Array BooleanArray ByteArray CharArray ShortArray IntArray LongArray FloatArray DoubleArray "
    "UByte UShort UInt ULong UByteArray UShortArray UIntArray ULongArray Pair Triple Result Lazy "
    "LazyThreadSafetyMode Comparable Comparator Enum Annotation Throwable Error Exception "
    "RuntimeException IllegalArgumentException IllegalStateException IndexOutOfBoundsException "
    "UnsupportedOperationException NoSuchElementException NullPointerException ClassCastException "
    "ArithmeticException NumberFormatException ConcurrentModificationException AssertionError "
    "NotImplementedError KotlinNullPointerException UninitializedPropertyAccessException KotlinVersion "
    "Deprecated DeprecationLevel ReplaceWith Suppress PublishedApi DslMarker OptIn RequiresOptIn "
    "SinceKotlin UnsafeVariance BuilderInference OverloadResolutionByLambdaReturnType Function "
    # kotlin.annotation.*
    "Target AnnotationTarget Retention AnnotationRetention MustBeDocumented Repeatable "
    # kotlin.collections.*
    "Iterable MutableIterable Collection MutableCollection List MutableList Set MutableSet Map "
    "MutableMap Iterator MutableIterator ListIterator MutableListIterator ArrayList HashMap HashSet "
    "LinkedHashMap LinkedHashSet ArrayDeque RandomAccess AbstractCollection AbstractList AbstractSet "
    "AbstractMap AbstractMutableCollection AbstractMutableList AbstractMutableSet AbstractMutableMap "
    "AbstractIterator IndexedValue Grouping "
    # kotlin.ranges.*, kotlin.sequences.*
    "IntRange LongRange CharRange UIntRange ULongRange ClosedRange ClosedFloatingPointRange OpenEndRange "
    "IntProgression LongProgression CharProgression Sequence "
    # kotlin.text.*
    "Regex RegexOption MatchResult MatchGroup StringBuilder Charsets CharCategory Typography "
    # kotlin.jvm.*
    "JvmStatic JvmField JvmOverloads JvmName JvmInline JvmRecord JvmSuppressWildcards JvmWildcard "
    "JvmMultifileClass JvmDefault Throws Volatile Synchronized Transient Strictfp"
)
# ... and their functions called by name (``check(x)``, ``run { }``, ``lazy { }``).
_KOTLIN_FUNCTIONS = _words(
    "lazy lazyOf require requireNotNull check checkNotNull error TODO repeat run with apply also let "
    "takeIf takeUnless runCatching synchronized to arrayOf arrayOfNulls emptyArray booleanArrayOf "
    "byteArrayOf charArrayOf shortArrayOf intArrayOf longArrayOf floatArrayOf doubleArrayOf "
    "enumValues enumValueOf enumEntries assert suspend "
    "emptyList emptyMap emptySet listOf listOfNotNull mutableListOf arrayListOf mapOf mutableMapOf "
    "hashMapOf linkedMapOf sortedMapOf setOf setOfNotNull mutableSetOf hashSetOf linkedSetOf sortedSetOf "
    "buildList buildMap buildSet compareBy compareByDescending compareValues compareValuesBy "
    "naturalOrder reverseOrder nullsFirst nullsLast maxOf minOf println print readLine readln "
    "readlnOrNull emptySequence sequenceOf generateSequence sequence iterator buildString"
)

_JVM_TYPES = """
(superclass (type_identifier) @base)
(super_interfaces (type_list (type_identifier) @base))
(type_identifier) @type
(object_creation_expression type: (type_identifier) @call)
(method_invocation name: (identifier) @call)
(method_invocation !object name: (identifier) @call.self)
(field_access field: (identifier) @attr)
(argument_list (identifier) @name)
(import_declaration) @import
"""

JAVA = RefSpec(
    "java",
    _JVM_TYPES
    + """
(extends_interfaces (type_list (type_identifier) @base))
(marker_annotation name: (identifier) @decorator)
(annotation name: (identifier) @decorator)
(type_parameter (type_identifier) @skip)
(formal_parameter name: (identifier) @bind)
(variable_declarator name: (identifier) @bind)
(formal_parameter) @typed
(local_variable_declaration) @typed
(field_declaration) @typed
(enhanced_for_statement name: (identifier) @bind)
(enhanced_for_statement) @typed
""",
    imports.dotted,
    builtins=_JAVA_BUILTINS | _JAVA_LANG,
    package=True,
    typed_fields=(("name", "type"), ("declarator", "type")),
    implicit_self=True,
    arrow_members=False,
    rules=(declared.java,),
    namespaces=True,
)

GROOVY = RefSpec(
    "groovy",
    _JVM_TYPES,
    imports.dotted,
    builtins=_JAVA_BUILTINS | {"def"},
    implicit_self=True,
    arrow_members=False,
)

KOTLIN = RefSpec(
    "kotlin",
    """
(call_expression (identifier) @call)
(call_expression (navigation_expression (identifier) @call .))
(navigation_expression (identifier) @attr .)
(user_type (identifier) @type)
(delegation_specifier (user_type (identifier) @base))
(delegation_specifier (constructor_invocation (user_type (identifier) @base)))
(class_declaration
  (delegation_specifiers (delegation_specifier [(user_type) (constructor_invocation)]) @open))
(object_declaration
  (delegation_specifiers (delegation_specifier [(user_type) (constructor_invocation)]) @open))
(companion_object
  (delegation_specifiers (delegation_specifier [(user_type) (constructor_invocation)]) @open))
(annotation (user_type (identifier) @decorator))
(parameter (identifier) @bind)
(variable_declaration (identifier) @bind)
(import) @import
(property_declaration) @typed
(variable_declaration) @typed
(class_parameter) @typed
(parameter) @typed
""",
    imports.dotted,
    builtins=_JAVA_BUILTINS | _JAVA_LANG | _KOTLIN_TYPES,
    default_functions=_KOTLIN_FUNCTIONS,
    package=True,
    implicit_self=True,
    arrow_members=False,
    extension_calls=True,
    rules=(declared.kotlin,),
    namespaces=True,
)

SCALA = RefSpec(
    "scala",
    """
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (identifier) @call))
(instance_expression (type_identifier) @call)
(field_expression field: (identifier) @attr)
(type_identifier) @type
(extends_clause type: (type_identifier) @base)
(annotation name: (type_identifier) @decorator)
(parameter name: (identifier) @bind)
(val_definition pattern: (identifier) @bind)
(var_definition pattern: (identifier) @bind)
(import_declaration) @import
""",
    imports.dotted,
    builtins=_JAVA_BUILTINS | {"Int", "Any", "Unit", "Seq", "println"},
    package=True,
    implicit_self=True,
    arrow_members=False,
)

CSHARP = RefSpec(
    "csharp",
    """
(invocation_expression function: (identifier) @call)
(invocation_expression function: (identifier) @call.self)
(invocation_expression function: (member_access_expression name: (identifier) @call))
(object_creation_expression type: (identifier) @call)
(member_access_expression name: (identifier) @attr)
(base_list (identifier) @base)
(attribute name: (identifier) @decorator)
(parameter type: (identifier) @type)
(variable_declaration type: (identifier) @type)
(property_declaration type: (identifier) @type)
(event_declaration type: (identifier) @type)
(indexer_declaration type: (identifier) @type)
(argument (identifier) @name)
(property_declaration name: (identifier) @property)
(event_declaration name: (identifier) @property)
(event_field_declaration (variable_declaration (variable_declarator name: (identifier) @property)))
(argument (identifier) @name.member)
(return_statement (identifier) @name.member)
(arrow_expression_clause (identifier) @name.member)
(binary_expression (identifier) @name.member)
(assignment_expression (identifier) @name.member)
(variable_declarator (identifier) @name.member .)
(member_access_expression expression: (identifier) @name.member)
(element_access_expression expression: (identifier) @name.member)
(conditional_access_expression condition: (identifier) @name.member)
(interpolation (identifier) @name.member)
(prefix_unary_expression (identifier) @name.member)
(postfix_unary_expression (identifier) @name.member)
(parenthesized_expression (identifier) @name.member)
(conditional_expression (identifier) @name.member)
(initializer_expression (identifier) @name.member)
(if_statement condition: (identifier) @name.member)
(while_statement condition: (identifier) @name.member)
(foreach_statement right: (identifier) @name.member)
(lambda_expression body: (identifier) @name.member)
(cast_expression value: (identifier) @name.member)
(is_pattern_expression expression: (identifier) @name.member)
(switch_expression (identifier) @name.member)
(base_list) @open
((modifier) @open (#eq? @open "partial"))
(parameter name: (identifier) @bind)
(variable_declarator name: (identifier) @bind)
(foreach_statement left: (identifier) @bind)
(using_directive) @import
(variable_declaration) @typed
(parameter) @typed
(property_declaration) @typed
(event_declaration) @typed
(foreach_statement) @typed
""",
    imports.dotted,
    super_names=frozenset({"base"}),
    builtins=_words("string int long bool double float object var void decimal char byte nameof"),
    implicit_self=True,
    arrow_members=False,
    rules=(declared.csharp,),
    namespaces=True,
    byte_scopes=True,
    typed_apart=True,
)

_C_BUILTINS = _words(
    "printf fprintf sprintf snprintf malloc calloc realloc free memcpy memset memmove strlen strcmp strncmp "
    "strcpy strncpy sizeof assert exit abort size_t uint8_t uint16_t uint32_t uint64_t int8_t int16_t "
    "int32_t int64_t FILE NULL std"
)

_C_COMMON = """
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
(field_expression field: (field_identifier) @attr)
(type_identifier) @type
(argument_list (identifier) @name)
(struct_specifier name: (type_identifier) @skip body: (_))
(union_specifier name: (type_identifier) @skip body: (_))
(enum_specifier name: (type_identifier) @skip body: (_))
(type_definition declarator: (type_identifier) @skip)
(parameter_declaration declarator: (identifier) @bind)
(pointer_declarator declarator: (identifier) @bind)
(init_declarator declarator: (identifier) @bind)
(preproc_include) @import
"""

C = RefSpec("c", _C_COMMON, imports.c_include, builtins=_C_BUILTINS, included=True)
CPP = RefSpec(
    "cpp",
    _C_COMMON
    + """
(call_expression function: (qualified_identifier name: (identifier) @call))
(call_expression function: (qualified_identifier name: (qualified_identifier name: (identifier) @call)))
(call_expression function: (qualified_identifier name: (qualified_identifier name: (qualified_identifier
  name: (identifier) @call))))
(call_expression function: (qualified_identifier name: (qualified_identifier name: (qualified_identifier
  name: (qualified_identifier name: (identifier) @call)))))
(new_expression type: (type_identifier) @call)
(base_class_clause (type_identifier) @base)
(class_specifier name: (type_identifier) @skip body: (_))
(template_parameter_list (type_parameter_declaration (type_identifier) @skip))
(declaration) @cpp.typed
(parameter_declaration) @cpp.typed
(for_range_loop) @cpp.typed
(field_declaration) @cpp.field
""",
    imports.c_include,
    builtins=_C_BUILTINS,
    implicit_self=True,
    rules=(cpp_types.typed_locals, cpp_types.class_fields),
    included=True,
)
OBJC = RefSpec(
    "objc",
    """
(call_expression function: (identifier) @call)
(message_expression method: (identifier) @call)
(field_expression field: (field_identifier) @attr)
(class_interface superclass: (identifier) @base)
""",
    self_names=frozenset({"self"}),
    builtins=_C_BUILTINS | {"NSLog", "NSString", "NSObject"},
)

_RUBY_BUILTINS = _words(
    "puts print p require require_relative attr_accessor attr_reader attr_writer include extend raise "
    "private protected public new lambda proc loop block_given? yield"
)

RUBY = RefSpec(
    "ruby",
    """
(call method: (identifier) @call)
(call !receiver method: (identifier) @call.self)
(body_statement (identifier) @call.self)
(call receiver: (identifier) @call.self)
(binary (identifier) @call.self)
(interpolation (identifier) @call.self)
(argument_list (identifier) @call.self)
(assignment right: (identifier) @call.self)
(operator_assignment right: (identifier) @call.self)
(array (identifier) @call.self)
(pair value: (identifier) @call.self)
(optional_parameter value: (identifier) @call.self)
(_ condition: (identifier) @call.self)
(call receiver: (constant) @type)
(superclass (constant) @base)
(superclass (scope_resolution name: (constant) @base))
(scope_resolution name: (constant) @type)
(argument_list (constant) @type)
(method_parameters (identifier) @bind)
(block_parameters (identifier) @bind.block)
(lambda_parameters (identifier) @bind.block)
(optional_parameter name: (identifier) @bind)
(keyword_parameter name: (identifier) @bind)
(splat_parameter name: (identifier) @bind)
(hash_splat_parameter name: (identifier) @bind)
(block_parameter name: (identifier) @bind)
(assignment left: (identifier) @bind)
(operator_assignment left: (identifier) @bind)
(left_assignment_list (identifier) @bind)
(exception_variable (identifier) @bind)
(for pattern: (identifier) @bind)
""",
    self_names=frozenset({"self"}),
    builtins=_RUBY_BUILTINS,
    implicit_self=True,
    arrow_members=False,
    bind_span=ruby_span,
)

PHP = RefSpec(
    "php",
    """
(function_call_expression function: (name) @call)
(member_call_expression name: (name) @call)
(scoped_call_expression name: (name) @call)
(object_creation_expression (name) @call)
(object_creation_expression (qualified_name (name) @call))
(member_access_expression name: (name) @attr)
(base_clause (name) @base)
(class_interface_clause (name) @base)
(named_type (name) @type)
(namespace_use_clause) @import
(namespace_definition) @namespace
""",
    imports.dotted,
    self_names=frozenset({"$this", "self", "static"}),
    super_names=frozenset({"parent"}),
    builtins=_words("self static parent"),  # (new self(), : static: no class of the namespace)
    dot_members=False,
    namespace_classes=True,
)

LUA = RefSpec(
    "lua",
    """
(function_call name: (identifier) @call)
(function_call name: (dot_index_expression field: (identifier) @call))
(function_call name: (method_index_expression method: (identifier) @call))
(dot_index_expression field: (identifier) @attr)
(parameters name: (identifier) @bind)
(variable_declaration (assignment_statement (variable_list name: (identifier) @bind)))
""",
    self_names=frozenset({"self"}),
    builtins=_words("print require pairs ipairs tostring tonumber type error assert pcall table string "),
    arrow_members=False,
)

BASH = RefSpec(
    "bash", "(command name: (command_name (word) @call))", self_names=frozenset(), arrow_members=False
)

PERL = RefSpec(
    "perl",
    """
(function_call_expression function: (function) @call)
(method_call_expression method: (method) @call)
""",
    self_names=frozenset({"$self"}),
    dot_members=False,
)

JULIA = RefSpec(
    "julia",
    """
(call_expression . (identifier) @call)
(call_expression . (field_expression (identifier) @call .))
(field_expression (identifier) @attr .)
(signature (call_expression . (identifier) @skip))
""",
    self_names=frozenset(),
    arrow_members=False,
)

DART = RefSpec(
    "dart",
    """
(type_identifier) @type
(superclass (type_identifier) @base)
(interfaces (type_identifier) @base)
(mixins (type_identifier) @base)
(unconditional_assignable_selector (identifier) @attr)
(_ (identifier) @call . (selector (argument_part)))
""",
    implicit_self=True,
    arrow_members=False,
)

ZIG = RefSpec(
    "zig",
    """
(call_expression function: (identifier) @call)
(call_expression function: (field_expression member: (identifier) @call))
(field_expression member: (identifier) @attr)
""",
    self_names=frozenset({"self"}),
    arrow_members=False,
)

SWIFT = RefSpec(
    "swift",
    """
(call_expression . (simple_identifier) @call)
(call_expression . (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @call)))
(navigation_suffix suffix: (simple_identifier) @attr)
(user_type (type_identifier) @type)
(inheritance_specifier inherits_from: (user_type (type_identifier) @base))
""",
    self_names=frozenset({"self"}),
    implicit_self=True,
    arrow_members=False,
)

HASKELL = RefSpec(
    "haskell",
    """
(apply function: (variable) @call)
(apply function: (qualified id: (variable) @call))
(qualified id: (_) @attr)
""",
    self_names=frozenset(),
    arrow_members=False,
)

ELIXIR = RefSpec(
    "elixir",
    """
(call target: (dot right: (identifier) @call))
(call target: (identifier) @call)
""",
    self_names=frozenset(),
    builtins=_words("def defp defmodule defstruct defmacro alias import require use if unless case cond"),
    arrow_members=False,
)

OCAML = RefSpec(
    "ocaml",
    """
(application_expression function: (value_path (value_name) @call))
(value_path (module_path) (value_name) @attr)
""",
    self_names=frozenset(),
    arrow_members=False,
)

REF_SPECS: dict[str, RefSpec] = {
    s.language: s
    for s in (
        PYTHON,
        JAVASCRIPT,
        TYPESCRIPT,
        TSX,
        GO,
        RUST,
        JAVA,
        KOTLIN,
        SCALA,
        GROOVY,
        CSHARP,
        C,
        CPP,
        OBJC,
        RUBY,
        PHP,
        LUA,
        BASH,
        PERL,
        JULIA,
        DART,
        ZIG,
        SWIFT,
        HASKELL,
        ELIXIR,
        OCAML,
    )
}
