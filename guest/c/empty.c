/* lua-src links `wasi-emulated-signal` for wasi targets; Lua's library never
 * calls signal(), so an empty archive satisfies the link line. */
typedef int moonbox_empty_translation_unit;
