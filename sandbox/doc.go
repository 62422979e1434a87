// Package sandbox is the one place nwdes starts a process it does not
// trust: a contract's CHECK command today, a worker later. Everything else
// asks a Runner.
//
// The Runner interface is deliberately narrow (one call: a command in, a
// result out) so that a stricter runner (landlock, namespaces) can wrap or
// replace Exec without its callers changing. Exec gives every process an
// explicit working directory, an allow-listed environment with a private
// HOME and TMPDIR, its own process group killed as a whole at a deadline,
// and captured output: the full stream is digested, only a bounded tail is
// kept in memory.
//
// It imports the standard library and golang.org/x/sys only; it knows
// nothing of git, contracts or records.
package sandbox
