package shell

import "sync"

// table is a package-level value built at its first use: the command,
// option and variable tables of the analysis. A map literal in a package
// variable is built at the start of every process that links the package
// (every airlock process: the hook, the supervisor, the sandbox's
// helpers), whatever it runs; a table's zero value with build set is
// static data, with nothing to allocate or run at init (unlike
// sync.OnceValue, a call at init).
type table[T any] struct {
	once  sync.Once
	value T
	build func() T
}

// get returns the table, building it the first time.
func (t *table[T]) get() T {
	t.once.Do(func() { t.value = t.build() })
	return t.value
}
