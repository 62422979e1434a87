package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nwdes/nwdes/refusal"
)

// Config is git configuration read in process, in git's order: system,
// global (XDG, then ~/.gitconfig), the repository, the worktree
// (extensions.worktreeConfig), then GIT_CONFIG_COUNT/KEY/VALUE and
// GIT_CONFIG_PARAMETERS (what `git -c` passes to hooks and subcommands).
// include.path is followed; includeIf is not evaluated, and its presence is
// reported by Conditional so that a caller can ask git instead.
//
// The hook reads its configuration this way because starting `git config`
// would cost as much as the whole check.
type Config struct {
	entries []configEntry
	// Conditional is set when some file used includeIf, whose conditions
	// this reader does not evaluate.
	Conditional bool
}

type configEntry struct {
	key   string // section[.subsection].name, section and name lower-cased
	value string
	file  string // "" for the environment
}

// Add appends a value for key, as a later scope would.
func (c *Config) Add(key, value string) {
	c.entries = append(c.entries, configEntry{key: normKey(key), value: value})
}

// Get returns the last value of key, git's "last one wins".
func (c *Config) Get(key string) (string, bool) {
	k := normKey(key)
	for i := len(c.entries) - 1; i >= 0; i-- {
		if c.entries[i].key == k {
			return c.entries[i].value, true
		}
	}
	return "", false
}

// GetAll returns every value of key in order.
func (c *Config) GetAll(key string) []string {
	k := normKey(key)
	var out []string
	for _, e := range c.entries {
		if e.key == k {
			out = append(out, e.value)
		}
	}
	return out
}

// normKey lower-cases a key's section and name; a subsection keeps its case.
func normKey(key string) string {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return strings.ToLower(key)
	}
	return strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:])
}

const maxIncludeDepth = 10

// ReadConfig reads the configuration a git command in loc would see.
// getenv supplies HOME, XDG_CONFIG_HOME and the GIT_CONFIG_* variables.
func ReadConfig(loc Location, getenv Getenv) (*Config, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	c := &Config{}
	home := getenv("HOME")
	if getenv("GIT_CONFIG_NOSYSTEM") == "" || configFalse(getenv("GIT_CONFIG_NOSYSTEM")) {
		sys := getenv("GIT_CONFIG_SYSTEM")
		if sys == "" {
			sys = "/etc/gitconfig"
		}
		if err := c.readFile(sys, home, 0); err != nil {
			return nil, err
		}
	}
	if g := getenv("GIT_CONFIG_GLOBAL"); g != "" {
		if err := c.readFile(g, home, 0); err != nil {
			return nil, err
		}
	} else {
		xdg := getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			if err := c.readFile(filepath.Join(xdg, "git", "config"), home, 0); err != nil {
				return nil, err
			}
		}
		if home != "" {
			if err := c.readFile(filepath.Join(home, ".gitconfig"), home, 0); err != nil {
				return nil, err
			}
		}
	}
	if err := c.readFile(filepath.Join(loc.CommonDir, "config"), home, 0); err != nil {
		return nil, err
	}
	if v, ok := c.Get("extensions.worktreeConfig"); ok && configTrue(v) {
		if err := c.readFile(filepath.Join(loc.GitDir, "config.worktree"), home, 0); err != nil {
			return nil, err
		}
	}
	if err := c.readEnv(getenv); err != nil {
		return nil, err
	}
	return c, nil
}

func configTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1", "":
		return true
	}
	return false
}

func configFalse(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0":
		return true
	}
	return false
}

func (c *Config) readFile(path, home string, depth int) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read git config %s: %w", path, err)
	}
	entries, err := parseConfig(b)
	if err != nil {
		return configMalformed(path, err)
	}
	for _, e := range entries {
		e.file = path
		switch {
		case e.key == "include.path":
			if depth >= maxIncludeDepth {
				return configMalformed(path, fmt.Errorf("include.path nested more than %d deep", maxIncludeDepth))
			}
			inc := ExpandHome(e.value, home)
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(filepath.Dir(path), inc)
			}
			if err := c.readFile(inc, home, depth+1); err != nil {
				return err
			}
		case strings.HasPrefix(e.key, "includeif.") && strings.HasSuffix(e.key, ".path"):
			c.Conditional = true
		default:
			c.entries = append(c.entries, e)
		}
	}
	return nil
}

// configMalformed is the refusal for configuration git itself would refuse;
// it unwraps to a *ConfigError naming the file.
func configMalformed(path string, err error) error {
	ce := &ConfigError{File: path, Err: err}
	return refusal.New("ConfigurationMalformed", "fix the file (git config --list --show-origin shows what git reads)",
		"%v", ce).Wrap(ce)
}

// ConfigError is a git config file this reader could not parse.
type ConfigError struct {
	File string
	Err  error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("git config %s: %v", e.File, e.Err) }

// Unwrap returns the parse error.
func (e *ConfigError) Unwrap() error { return e.Err }

// ExpandHome expands a leading ~ in a path-valued setting, as git does.
func ExpandHome(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	return p
}

func (c *Config) readEnv(getenv Getenv) error {
	if n := getenv("GIT_CONFIG_COUNT"); n != "" {
		count, err := strconv.Atoi(n)
		if err != nil || count < 0 {
			return configMalformed("GIT_CONFIG_COUNT", fmt.Errorf("bogus count %q", n))
		}
		for i := 0; i < count; i++ {
			k := getenv("GIT_CONFIG_KEY_" + strconv.Itoa(i))
			if k == "" {
				return configMalformed("GIT_CONFIG_KEY_"+strconv.Itoa(i), errors.New("missing"))
			}
			c.entries = append(c.entries, configEntry{key: normKey(k), value: getenv("GIT_CONFIG_VALUE_" + strconv.Itoa(i))})
		}
	}
	if p := getenv("GIT_CONFIG_PARAMETERS"); p != "" {
		kvs, err := parseParameters(p)
		if err != nil {
			return configMalformed("GIT_CONFIG_PARAMETERS", err)
		}
		c.entries = append(c.entries, kvs...)
	}
	return nil
}

// parseParameters reads GIT_CONFIG_PARAMETERS: shell-quoted words, each
// either 'key'='value' (git 2.31 and later) or 'key=value'.
func parseParameters(s string) ([]configEntry, error) {
	var out []configEntry
	i := 0
	word := func() (string, error) {
		if i >= len(s) || s[i] != '\'' {
			return "", fmt.Errorf("expected a quoted word at offset %d", i)
		}
		i++
		var b strings.Builder
		for {
			j := strings.IndexByte(s[i:], '\'')
			if j < 0 {
				return "", errors.New("unterminated quote")
			}
			b.WriteString(s[i : i+j])
			i += j + 1
			if strings.HasPrefix(s[i:], `\''`) {
				b.WriteByte('\'')
				i += 3
				continue
			}
			return b.String(), nil
		}
	}
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
			i++
		}
		if i >= len(s) {
			return out, nil
		}
		k, err := word()
		if err != nil {
			return nil, err
		}
		var v string
		hasValue := false
		if i < len(s) && s[i] == '=' {
			i++
			if i < len(s) && s[i] == '\'' {
				if v, err = word(); err != nil {
					return nil, err
				}
			}
			hasValue = true
		}
		if !hasValue {
			var found bool
			if k, v, found = strings.Cut(k, "="); !found {
				v = "true"
			}
		}
		out = append(out, configEntry{key: normKey(k), value: v})
	}
}

// parseConfig parses one git config file: [section], [section "sub"] and
// the old [section.sub] headers; "name = value" and bare "name" (true);
// values with double quotes, the escapes \n \t \b \" \\, and
// backslash-newline continuations; comments after # or ; outside quotes.
func parseConfig(b []byte) ([]configEntry, error) {
	src := strings.TrimPrefix(string(b), "\ufeff")
	var out []configEntry
	section := ""
	line := 1
	i := 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
	}
	skipSpace := func() {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\r') {
			i++
		}
	}
	skipLine := func() {
		for i < len(src) && src[i] != '\n' {
			i++
		}
	}
	for i < len(src) {
		skipSpace()
		if i >= len(src) {
			break
		}
		switch ch := src[i]; {
		case ch == '\n':
			line++
			i++
		case ch == '#' || ch == ';':
			skipLine()
		case ch == '[':
			i++
			start := i
			for i < len(src) && (isKeyChar(src[i]) || src[i] == '.') {
				i++
			}
			name := strings.ToLower(src[start:i])
			if name == "" {
				return nil, bad("empty section name")
			}
			if i < len(src) && (src[i] == ' ' || src[i] == '\t') {
				skipSpace()
				if i >= len(src) || src[i] != '"' {
					return nil, bad("expected a quoted subsection")
				}
				i++
				var sub strings.Builder
				for {
					if i >= len(src) || src[i] == '\n' {
						return nil, bad("unterminated subsection")
					}
					c := src[i]
					if c == '"' {
						i++
						break
					}
					if c == '\\' && i+1 < len(src) && src[i+1] != '\n' {
						i++
						c = src[i]
					}
					sub.WriteByte(c)
					i++
				}
				name += "." + sub.String()
			} else if dot := strings.IndexByte(name, '.'); dot >= 0 {
				// [section.sub]: the deprecated form, sub lower-cased.
				name = name[:dot] + "." + strings.ToLower(name[dot+1:])
			}
			if i >= len(src) || src[i] != ']' {
				return nil, bad("expected ']'")
			}
			i++
			section = name
		case isKeyChar(ch):
			if section == "" {
				return nil, bad("variable outside any section")
			}
			start := i
			for i < len(src) && isKeyChar(src[i]) {
				i++
			}
			key := section + "." + strings.ToLower(src[start:i])
			skipSpace()
			if i >= len(src) || src[i] == '\n' || src[i] == '#' || src[i] == ';' {
				out = append(out, configEntry{key: normKey(key), value: "true"})
				continue
			}
			if src[i] != '=' {
				return nil, bad("expected '=' after %s", key)
			}
			i++
			skipSpace()
			v, lines, err := parseValue(src, &i)
			if err != nil {
				return nil, bad("%v", err)
			}
			line += lines
			out = append(out, configEntry{key: normKey(key), value: v})
		default:
			return nil, bad("unexpected %q", ch)
		}
	}
	return out, nil
}

func isKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

// parseValue reads a value up to the end of its (possibly continued) line,
// trimming unquoted trailing space, and returns how many newlines it ate.
func parseValue(src string, i *int) (string, int, error) {
	var b strings.Builder
	quoted := false
	trim := 0 // length of b without trailing unquoted whitespace
	lines := 0
	for *i < len(src) {
		c := src[*i]
		switch {
		case c == '\n':
			if quoted {
				return "", lines, errors.New("newline inside a quoted value")
			}
			return b.String()[:trim], lines, nil
		case !quoted && (c == '#' || c == ';'):
			for *i < len(src) && src[*i] != '\n' {
				*i++
			}
			return b.String()[:trim], lines, nil
		case c == '"':
			quoted = !quoted
			*i++
			trim = b.Len()
			continue
		case c == '\\':
			*i++
			if *i >= len(src) {
				return "", lines, errors.New("backslash at end of file")
			}
			switch e := src[*i]; e {
			case '\n':
				lines++
			case '\r':
				if *i+1 < len(src) && src[*i+1] == '\n' {
					*i++
					lines++
				}
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case '"', '\\':
				b.WriteByte(e)
			default:
				return "", lines, fmt.Errorf("bad escape \\%c", e)
			}
			*i++
			trim = b.Len()
			continue
		}
		b.WriteByte(c)
		*i++
		if quoted || (c != ' ' && c != '\t' && c != '\r') {
			trim = b.Len()
		}
	}
	if quoted {
		return "", lines, errors.New("unterminated quote")
	}
	return b.String()[:trim], lines, nil
}
