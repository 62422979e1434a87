package gitrepo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/nwdes/nwdes/refusal"
)

// Config is git configuration read in process, as git 2.39 reads it, in
// git's order: system, global (XDG, then ~/.gitconfig), the repository, the
// worktree (extensions.worktreeConfig), then GIT_CONFIG_COUNT/KEY/VALUE and
// GIT_CONFIG_PARAMETERS (what `git -c` passes to hooks and subcommands).
// include.path is followed, and includeIf conditions are evaluated as git
// evaluates them: gitdir: and gitdir/i: (against the repository's git
// directory), onbranch: (the branch HEAD names) and hasconfig:remote.*.url:.
// Entries are kept in git's order, the include directives among them, so
// GetAll returns what `git config --get-all` prints.
//
// The hook reads its configuration this way because starting `git config`
// would cost as much as the whole check.
type Config struct {
	entries []configEntry
	// Conditional is set when some include could not be evaluated
	// faithfully in process, so that a caller may ask git instead: a path
	// under %(prefix)/ (git's install prefix), a ~/ path or pattern with
	// HOME empty or unset (which git reads differently, and Getenv cannot
	// tell apart), or an includeIf met while reading a file outside any
	// repository (repoConfig).
	Conditional bool
}

type configEntry struct {
	key   string // section[.subsection].name, section and name lower-cased
	value string
	// bare is a name with no "=": git's implicit true (value reads "true").
	bare bool
	file string // "" for the environment (git's "command line")
	line int
}

// malformed is the refusal for e, naming its file and line.
func (e configEntry) malformed(err error) error {
	if e.file == "" {
		return configMalformed("the command line (GIT_CONFIG_PARAMETERS or GIT_CONFIG_COUNT)", err)
	}
	return configMalformed(e.file, fmt.Errorf("line %d: %w", e.line, err))
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
func (c *Config) GetAll(key string) []string { return c.values(key, false) }

// Printed returns every value of key as `git config --get-all` prints it:
// as GetAll, but a name with no "=" prints as an empty line.
func (c *Config) Printed(key string) []string { return c.values(key, true) }

func (c *Config) values(key string, printed bool) []string {
	k := normKey(key)
	var out []string
	for _, e := range c.entries {
		if e.key == k {
			v := e.value
			if printed && e.bare {
				v = ""
			}
			out = append(out, v)
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

const (
	// maxIncludeDepth is git's MAX_INCLUDE_DEPTH.
	maxIncludeDepth = 10
	// maxConfigBytes bounds one file: git streams, this reader does not,
	// and a path such as /dev/zero must not exhaust memory.
	maxConfigBytes = 64 << 20
)

// ReadConfig reads the configuration a git command in loc would see.
// getenv supplies HOME, XDG_CONFIG_HOME and the GIT_CONFIG_* variables. A
// configuration git would refuse to read is refused (ConfigurationMalformed,
// unwrapping to a *ConfigError).
func ReadConfig(loc Location, getenv Getenv) (*Config, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	r := &configReader{cfg: &Config{}, loc: loc, inRepo: true, getenv: getenv, home: getenv("HOME")}
	if err := r.sequence(r.keep); err != nil {
		return nil, err
	}
	return r.cfg, nil
}

// ParseBool reads a boolean as `git config --type=bool` does: true, yes
// and on, false, no and off in any case; the empty value is false; an
// integer (decimal, 0x hex or 0-prefixed octal, with an optional k, m or g
// factor, within a C int) is true unless zero. Anything else is an error,
// as git refuses it. A bare key (no "=") reads as "true".
func ParseBool(v string) (bool, error) {
	switch asciiLower(v) {
	case "":
		return false, nil
	case "true", "yes", "on":
		return true, nil
	case "false", "no", "off":
		return false, nil
	}
	if n, ok := parseGitInt(v); ok {
		return n != 0, nil
	}
	return false, fmt.Errorf("bad boolean config value %q", v)
}

// parseGitInt is git_parse_int: strtoimax with base 0 (C leading space, a
// sign, 0x or 0 prefixes), a k/m/g factor, and the range of a C int.
func parseGitInt(v string) (int64, bool) {
	i := 0
	for i < len(v) && strings.IndexByte(" \t\n\v\f\r", v[i]) >= 0 {
		i++
	}
	neg := false
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		neg = v[i] == '-'
		i++
	}
	base := 10
	switch {
	case strings.HasPrefix(v[i:], "0x") || strings.HasPrefix(v[i:], "0X"):
		if i+2 < len(v) && hexDigit(v[i+2]) >= 0 {
			base = 16
			i += 2
		} else {
			base = 8
		}
	case strings.HasPrefix(v[i:], "0"):
		base = 8
	}
	start := i
	var n uint64
	overflow := false
	for ; i < len(v); i++ {
		d := hexDigit(v[i])
		if d < 0 || d >= base {
			break
		}
		if n > (math.MaxInt64-uint64(d))/uint64(base) {
			overflow = true
		}
		n = n*uint64(base) + uint64(d)
	}
	if i == start || overflow {
		return 0, false
	}
	var factor uint64
	switch asciiLower(v[i:]) {
	case "":
		factor = 1
	case "k":
		factor = 1 << 10
	case "m":
		factor = 1 << 20
	case "g":
		factor = 1 << 30
	default:
		return 0, false
	}
	if n > math.MaxInt32/factor {
		return 0, false
	}
	val := int64(n * factor)
	if neg {
		val = -val
	}
	return val, true
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func configTrue(v string) bool {
	b, err := ParseBool(v)
	return err == nil && b
}

func configFalse(v string) bool {
	b, err := ParseBool(v)
	return err == nil && !b
}

// configReader reads configuration as git's config_with_options does with
// includes respected; one reader serves one sequence of scopes.
type configReader struct {
	cfg    *Config
	loc    Location
	inRepo bool // false for a lone file outside any repository (repoConfig)
	getenv Getenv
	home   string
	// urls are the remote.*.url values includeIf.hasconfig:remote.*.url
	// conditions match, read (once, when first needed) by a second pass
	// over every scope in which such conditions all hold.
	urls       []string
	urlsLoaded bool
	// unconditional marks that second pass.
	unconditional bool
}

// entryFunc receives each entry in order (git's config_fn_t).
type entryFunc func(configEntry) error

func (r *configReader) keep(e configEntry) error {
	r.cfg.entries = append(r.cfg.entries, e)
	return nil
}

// readFile reads one file (and what it includes) into c, outside any
// repository: includeIf conditions are not evaluated but reported by
// Conditional.
func (c *Config) readFile(path, home string, depth int) error {
	r := &configReader{cfg: c, home: home, getenv: func(string) string { return "" }}
	_, err := r.file(path, depth, r.keep)
	return err
}

// sequence is git's do_git_config_sequence.
func (r *configReader) sequence(fn entryFunc) error {
	noSystem := false
	if v := r.getenv("GIT_CONFIG_NOSYSTEM"); v != "" {
		b, err := ParseBool(v)
		if err != nil {
			return configMalformed("GIT_CONFIG_NOSYSTEM", err)
		}
		noSystem = b
	}
	if !noSystem {
		sys := r.getenv("GIT_CONFIG_SYSTEM")
		if sys == "" {
			sys = "/etc/gitconfig"
		}
		if _, err := r.file(sys, 0, fn); err != nil {
			return err
		}
	}
	if g := r.getenv("GIT_CONFIG_GLOBAL"); g != "" {
		if _, err := r.file(g, 0, fn); err != nil {
			return err
		}
	} else {
		xdg := r.getenv("XDG_CONFIG_HOME")
		switch {
		case xdg != "":
			xdg += "/git/config"
		case r.home != "":
			xdg = r.home + "/.config/git/config"
		}
		if xdg != "" {
			if _, err := r.file(xdg, 0, fn); err != nil {
				return err
			}
		}
		if r.home != "" {
			if _, err := r.file(r.home+"/.gitconfig", 0, fn); err != nil {
				return err
			}
		}
	}
	if r.loc.CommonDir == "" {
		return r.env(fn)
	}
	local, err := r.file(r.loc.CommonDir+"/config", 0, fn)
	if err != nil {
		return err
	}
	// git takes extensions.worktreeConfig from the repository's own file
	// alone, includes not followed, when it checks the repository format,
	// and forgets it when core.repositoryFormatVersion is not set there.
	worktree := false
	version := int64(-1)
	for _, e := range local {
		switch e.key {
		case "extensions.worktreeconfig":
			if worktree, err = ParseBool(e.value); err != nil {
				return e.malformed(fmt.Errorf("%w for extensions.worktreeConfig", err))
			}
		case "core.repositoryformatversion":
			var ok bool
			if version, ok = parseGitInt(e.value); !ok || e.bare {
				return e.malformed(fmt.Errorf("bad numeric value %q for core.repositoryFormatVersion", e.value))
			}
		}
	}
	if worktree && version != -1 {
		if _, err := r.file(r.loc.GitDir+"/config.worktree", 0, fn); err != nil {
			return err
		}
	}
	return r.env(fn)
}

// file reads one file and hands its entries to fn, following includes; a
// file that does not exist reads as empty. It returns the file's own
// entries.
func (r *configReader) file(path string, depth int, fn entryFunc) ([]configEntry, error) {
	b, err := readConfigFile(path)
	if isMissing(err) || errors.Is(err, fs.ErrPermission) {
		return nil, nil
	}
	if err != nil {
		return nil, configMalformed(path, err)
	}
	entries, err := parseConfig(b)
	if err != nil {
		return nil, configMalformed(path, err)
	}
	for _, e := range entries {
		e.file = path
		if err := r.entry(e, depth, fn); err != nil {
			return nil, err
		}
	}
	return entries, nil
}

func readConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxConfigBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxConfigBytes)
	}
	return b, nil
}

// isMissing is git's access_error_is_ok: a path that is not there.
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// entry is git's git_config_include: every entry, include directives
// among them, goes to fn; then include.path and a matching
// includeIf.<condition>.path are followed.
func (r *configReader) entry(e configEntry, depth int, fn entryFunc) error {
	if err := fn(e); err != nil {
		return err
	}
	if e.key == "include.path" {
		return r.include(e, depth, fn)
	}
	cond, name, ok := includeIfKey(e.key)
	if !ok {
		return nil
	}
	if !r.inRepo {
		if name == "path" {
			r.cfg.Conditional = true
		}
		return nil
	}
	match, unknown, err := r.condition(cond, e)
	if err != nil {
		return err
	}
	if name != "path" {
		return nil
	}
	if unknown {
		r.cfg.Conditional = true
		return nil
	}
	if !match {
		return nil
	}
	if r.unconditional {
		return r.include(e, depth, forbidRemoteURL)
	}
	return r.include(e, depth, fn)
}

// includeIfKey splits includeif.<condition>.<name>.
func includeIfKey(key string) (cond, name string, ok bool) {
	rest, found := strings.CutPrefix(key, "includeif.")
	last := strings.LastIndexByte(rest, '.')
	if !found || last < 0 {
		return "", "", false
	}
	return rest[:last], rest[last+1:], true
}

// include is git's handle_path_include.
func (r *configReader) include(e configEntry, depth int, fn entryFunc) error {
	bad := func(format string, args ...any) error {
		return e.malformed(fmt.Errorf(format, args...))
	}
	if e.bare {
		return bad("missing value for include.path")
	}
	p, ok, unknown, _ := r.interpolate(e.value, false)
	if unknown || !ok && !r.inRepo {
		// left to git; so is a ~ outside a repository (repoConfig),
		// where no HOME is given
		r.cfg.Conditional = true
		return nil
	}
	if !ok {
		return bad("could not expand include path %q", e.value)
	}
	if !strings.HasPrefix(p, "/") {
		if e.file == "" {
			return bad("relative config includes must come from files: %q", e.value)
		}
		if slash := strings.LastIndexByte(e.file, '/'); slash >= 0 {
			p = e.file[:slash+1] + p
		}
	}
	if _, err := os.Stat(p); isMissing(err) {
		return nil
	} else if err != nil && !errors.Is(err, fs.ErrPermission) {
		return bad("include %s: %v", p, err)
	}
	if depth+1 > maxIncludeDepth {
		return bad("include %s nested more than %d deep", p, maxIncludeDepth)
	}
	_, err := r.file(p, depth+1, fn)
	return err
}

// interpolate is git's interpolate_path: a leading ~/ or ~user/. With
// realHome, HOME is taken through its symbolic links (an error where git
// dies). ok is false where git cannot expand. unknown is set where this
// reader cannot know git's answer: %(prefix)/, git's install prefix, and
// ~/ when HOME reads empty (git cannot expand ~/ with HOME unset but
// takes HOME set empty as /, and Getenv cannot tell the two apart).
func (r *configReader) interpolate(p string, realHome bool) (out string, ok, unknown bool, err error) {
	if strings.HasPrefix(p, "%(prefix)/") {
		return "", false, true, nil
	}
	if !strings.HasPrefix(p, "~") {
		return p, true, false, nil
	}
	slash := strings.IndexByte(p, '/')
	if slash < 0 {
		slash = len(p)
	}
	name := p[1:slash]
	if name == "" {
		if r.home == "" {
			return "", false, true, nil
		}
		home := r.home
		if realHome {
			rp, err := realPath(home)
			if err != nil {
				return "", false, false, fmt.Errorf("HOME %s: %w", home, err)
			}
			home = rp
		}
		return home + p[slash:], true, false, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return "", false, false, nil
	}
	return u.HomeDir + p[slash:], true, false, nil
}

// realPath is git's strbuf_realpath: symbolic links resolved, the last
// component allowed not to exist.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rp, err := filepath.EvalSymlinks(abs)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return rp, err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.Base(abs)), nil
}

// condition is git's include_condition_is_true; unknown conditions are
// false. e is the includeIf entry (its file anchors ./ patterns).
func (r *configReader) condition(cond string, e configEntry) (match, unknown bool, err error) {
	if rest, ok := strings.CutPrefix(cond, "gitdir:"); ok {
		return r.gitDirMatches(rest, e, false)
	}
	if rest, ok := strings.CutPrefix(cond, "gitdir/i:"); ok {
		return r.gitDirMatches(rest, e, true)
	}
	if rest, ok := strings.CutPrefix(cond, "onbranch:"); ok {
		return r.onBranch(rest), false, nil
	}
	if rest, ok := strings.CutPrefix(cond, "hasconfig:remote.*.url:"); ok {
		match, err := r.remoteURLMatches(rest)
		return match, false, err
	}
	return false, false, nil
}

// gitDirMatches is git's include_by_gitdir: the pattern, ~ expanded, ./
// taken from the including file's directory, a relative one prefixed with
// **/ and a trailing / meaning /**, is matched against the git directory's
// real path, then against its absolute path.
func (r *configReader) gitDirMatches(pat string, e configEntry, icase bool) (match, unknown bool, err error) {
	if r.loc.GitDir == "" {
		return false, false, nil
	}
	if expanded, ok, unk, err := r.interpolate(pat, true); err != nil {
		return false, false, e.malformed(err)
	} else if unk {
		return false, true, nil
	} else if ok {
		pat = expanded
	}
	prefix := 0
	switch {
	case strings.HasPrefix(pat, "./"):
		if e.file == "" {
			return false, false, nil
		}
		rp, err := realPath(e.file)
		if err != nil {
			return false, false, e.malformed(err)
		}
		dir := rp[:strings.LastIndexByte(rp, '/')]
		pat = dir + pat[1:]
		prefix = len(dir) + 1
	case !strings.HasPrefix(pat, "/"):
		pat = "**/" + pat
	}
	if strings.HasSuffix(pat, "/") {
		pat += "**"
	}
	real, err := realPath(r.loc.GitDir)
	if err != nil {
		return false, false, e.malformed(fmt.Errorf("git directory %s: %w", r.loc.GitDir, err))
	}
	flags := wmPathname
	if icase {
		flags |= wmCaseFold
	}
	for _, text := range []string{real, r.loc.GitDir} {
		// git compares the ./ prefix literally and gives up on a
		// difference, trying the absolute path only when the
		// pattern itself did not match.
		if len(text) < prefix {
			return false, false, nil
		}
		if a, b := pat[:prefix], text[:prefix]; icase && asciiLower(a) != asciiLower(b) || !icase && a != b {
			return false, false, nil
		}
		if wildmatch(pat[prefix:], text[prefix:], flags) {
			return true, false, nil
		}
	}
	return false, false, nil
}

// onBranch is git's include_by_branch: the branch HEAD names (following
// symbolic refs), matched with a trailing / meaning /**; false on a
// detached HEAD.
func (r *configReader) onBranch(pat string) bool {
	name, ok := r.headBranch()
	if !ok {
		return false
	}
	if strings.HasSuffix(pat, "/") {
		pat += "**"
	}
	return wildmatch(pat, name, wmPathname)
}

// headBranch resolves HEAD as git's resolve_ref_unsafe does without
// requiring the ref to exist (an unborn branch counts), reading at most
// five refs, and returns the branch it ends on when HEAD is symbolic.
func (r *configReader) headBranch() (string, bool) {
	if r.loc.GitDir == "" {
		return "", false
	}
	ref := "HEAD"
	symbolic := false
	for range 5 {
		dir := r.loc.CommonDir
		if ref == "HEAD" || strings.HasPrefix(ref, "refs/worktree/") || strings.HasPrefix(ref, "refs/bisect/") || strings.HasPrefix(ref, "refs/rewritten/") {
			dir = r.loc.GitDir
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(ref)))
		if err != nil && !isMissing(err) && !errors.Is(err, syscall.EISDIR) {
			return "", false
		}
		target, isRef := strings.CutPrefix(string(b), "ref:")
		if err != nil || !isRef {
			name, ok := strings.CutPrefix(ref, "refs/heads/")
			return name, ok && symbolic
		}
		ref = strings.Trim(target, " \t\n\r")
		symbolic = true
	}
	return "", false
}

// remoteURLMatches is git's include_by_remote_url: the glob against every
// remote.<name>.url in every scope, read once by a pass in which all
// hasconfig conditions hold and files they include may not set remote URLs.
func (r *configReader) remoteURLMatches(glob string) (bool, error) {
	if r.unconditional {
		return true, nil
	}
	if !r.urlsLoaded {
		pass := &configReader{cfg: &Config{}, loc: r.loc, inRepo: true, getenv: r.getenv, home: r.home, unconditional: true}
		if err := pass.sequence(pass.collectRemoteURL); err != nil {
			return false, err
		}
		r.urls, r.urlsLoaded = pass.urls, true
		r.cfg.Conditional = r.cfg.Conditional || pass.cfg.Conditional
	}
	for _, u := range r.urls {
		if wildmatch(glob, u, wmPathname) {
			return true, nil
		}
	}
	return false, nil
}

func isRemoteURL(key string) bool {
	rest, ok := strings.CutPrefix(key, "remote.")
	return ok && strings.HasSuffix(rest, ".url")
}

func (r *configReader) collectRemoteURL(e configEntry) error {
	if !isRemoteURL(e.key) {
		return nil
	}
	if e.bare {
		// git 2.39 crashes here; refusing is the nearest faithful reading.
		return e.malformed(fmt.Errorf("missing value for %s, needed by includeIf hasconfig:remote.*.url", e.key))
	}
	r.urls = append(r.urls, e.value)
	return nil
}

func forbidRemoteURL(e configEntry) error {
	if isRemoteURL(e.key) {
		return e.malformed(errors.New("remote URLs cannot be configured in file directly or indirectly included by includeIf.hasconfig:remote.*.url"))
	}
	return nil
}

// configMalformed is the refusal for configuration git itself would refuse;
// it unwraps to a *ConfigError naming the file.
func configMalformed(path string, err error) error {
	ce := &ConfigError{File: path, Err: err}
	return refusal.New(refusal.ConfigurationMalformed, "fix the file (git config --list --show-origin shows what git reads)",
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

// env is git's git_config_from_parameters: GIT_CONFIG_COUNT with its
// GIT_CONFIG_KEY_<n> and GIT_CONFIG_VALUE_<n>, then GIT_CONFIG_PARAMETERS.
// An unset GIT_CONFIG_VALUE_<n> reads as empty: Getenv cannot tell unset
// from empty.
func (r *configReader) env(fn entryFunc) error {
	if n := r.getenv("GIT_CONFIG_COUNT"); n != "" {
		count, err := parseCount(n)
		if err != nil {
			return configMalformed("GIT_CONFIG_COUNT", err)
		}
		for i := range count {
			name := fmt.Sprintf("GIT_CONFIG_KEY_%d", i)
			key, err := canonicalKey(r.getenv(name))
			if err != nil {
				return configMalformed(name, err)
			}
			e := configEntry{key: key, value: r.getenv(fmt.Sprintf("GIT_CONFIG_VALUE_%d", i))}
			if err := r.entry(e, 0, fn); err != nil {
				return err
			}
		}
	}
	if p := r.getenv("GIT_CONFIG_PARAMETERS"); p != "" {
		es, err := parseParameters(p)
		if err != nil {
			return configMalformed("GIT_CONFIG_PARAMETERS", err)
		}
		for _, e := range es {
			if err := r.entry(e, 0, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseCount reads GIT_CONFIG_COUNT as git's strtoul does.
func parseCount(s string) (int, error) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var n uint64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n <= math.MaxInt32 {
			n = n*10 + uint64(s[i]-'0')
		}
	}
	switch {
	case i == start || i != len(s):
		return 0, fmt.Errorf("bogus count %q", s)
	case neg && n != 0 || n > math.MaxInt32:
		return 0, fmt.Errorf("too many entries: %q", s)
	}
	return int(n), nil
}

// canonicalKey is git's git_config_parse_key: a section of letters,
// digits and '-', an optional subsection (any bytes but newline), and a
// name that starts with a letter; section and name lower-cased.
func canonicalKey(key string) (string, error) {
	last := strings.LastIndexByte(key, '.')
	switch {
	case key == "":
		return "", errors.New("empty config key")
	case last <= 0:
		return "", fmt.Errorf("key does not contain a section: %q", key)
	case last == len(key)-1:
		return "", fmt.Errorf("key does not contain variable name: %q", key)
	}
	b := []byte(key)
	dot := false
	for i, c := range b {
		if c == '.' {
			dot = true
		}
		if !dot || i > last {
			if !isKeyChar(c) || i == last+1 && !gitAlpha(int(c)) {
				return "", fmt.Errorf("invalid key: %q", key)
			}
			b[i] = lower(c)
		} else if c == '\n' {
			return "", fmt.Errorf("invalid key (newline): %q", key)
		}
	}
	return string(b), nil
}

// parseParameters reads GIT_CONFIG_PARAMETERS as git's
// parse_config_env_list does: shell-quoted words, each either
// 'key'='value' or 'key'= (git 2.31 and later) or 'key=value' or 'key'
// (a bare key, true), separated by whitespace.
func parseParameters(s string) ([]configEntry, error) {
	var out []configEntry
	bogus := errors.New("bogus format")
	i := 0
	for i < len(s) {
		key, next, ok := sqDequote(s, i)
		if !ok {
			return nil, bogus
		}
		var e configEntry
		switch {
		case next == len(s) || gitSpace(int(s[next])):
			// 'key=value', or a bare 'key'
			k, v, hasValue := strings.Cut(key, "=")
			k = strings.Trim(k, " \t\n\r")
			if k == "" {
				return nil, fmt.Errorf("bogus config parameter %q", key)
			}
			e = configEntry{key: k, value: v, bare: !hasValue}
			i = next
		case s[next] == '=':
			i = next + 1
			switch {
			case i < len(s) && s[i] == '\'':
				v, after, ok := sqDequote(s, i)
				if !ok || after < len(s) && !gitSpace(int(s[after])) {
					return nil, bogus
				}
				e = configEntry{key: key, value: v}
				i = after
			case i == len(s) || gitSpace(int(s[i])):
				e = configEntry{key: key, bare: true}
			default:
				return nil, bogus
			}
		default:
			return nil, bogus
		}
		if e.key == "" {
			return nil, errors.New("empty config key")
		}
		k, err := canonicalKey(e.key)
		if err != nil {
			return nil, err
		}
		e.key = k
		if e.bare {
			e.value = "true"
		}
		out = append(out, e)
		for i < len(s) && gitSpace(int(s[i])) {
			i++
		}
	}
	return out, nil
}

// sqDequote is git's sq_dequote_step: one single-quoted word starting at
// s[i], where '\” and '\!' outside the quotes stand for ' and !. It
// returns the word and the offset just past it.
func sqDequote(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '\'' {
		return "", i, false
	}
	var b strings.Builder
	i++
	for {
		j := strings.IndexByte(s[i:], '\'')
		if j < 0 {
			return "", i, false
		}
		b.WriteString(s[i : i+j])
		i += j + 1
		if i+2 < len(s) && s[i] == '\\' && (s[i+1] == '\'' || s[i+1] == '!') && s[i+2] == '\'' {
			b.WriteByte(s[i+1])
			i += 3
			continue
		}
		return b.String(), i, true
	}
}

// parseConfig parses one git config file exactly as git 2.39's
// git_parse_source does: [section], [section "sub"] (\ escapes any byte)
// and the old [section.sub] (lower-cased) headers; "name = value" and a
// bare "name" (true), a name starting with a letter and holding letters,
// digits and '-'; values with double quotes, the escapes \n \t \b \" \\,
// backslash-newline continuations, unquoted runs of whitespace (space,
// tab, a lone CR) turned into spaces and trimmed at both ends, and
// comments after # or ; outside quotes; CRLF read as LF; a UTF-8 byte
// order mark skipped. A NUL byte ends a key or value, as in git's C
// strings.
func parseConfig(b []byte) ([]configEntry, error) {
	p := &configParser{src: b, line: 1}
	var out []configEntry
	var section []byte
	bom := "\xef\xbb\xbf"
	inBOM := 0
	comment := false
	for {
		c := p.next()
		if inBOM >= 0 && inBOM < len(bom) {
			if c == int(bom[inBOM]) {
				inBOM++
				continue
			}
			if inBOM > 0 {
				return nil, p.bad("partial byte order mark")
			}
			inBOM = -1
		}
		switch {
		case c == '\n':
			if p.eof {
				return out, nil
			}
			comment = false
		case comment || gitSpace(c):
		case c == '#' || c == ';':
			comment = true
		case c == '[':
			name, ok := p.baseVar()
			if !ok || len(name) < 1 {
				return nil, p.bad("bad section header")
			}
			section = append(name, '.')
		case gitAlpha(c):
			e, ok := p.entry(append(section[:len(section):len(section)], lower(byte(c))))
			if !ok {
				return nil, p.bad("bad variable")
			}
			out = append(out, e)
		default:
			return nil, p.bad("unexpected %q", rune(c))
		}
	}
}

// configParser holds git's config_source state: the next byte, whether
// the end was read, and the line.
type configParser struct {
	src  []byte
	pos  int
	eof  bool
	line int
}

func (p *configParser) bad(format string, args ...any) error {
	return fmt.Errorf("bad config line %d: %s", p.line, fmt.Sprintf(format, args...))
}

// next is git's get_next_char: CRLF reads as LF, and the end of the input
// as a final LF.
func (p *configParser) next() int {
	read := func() int {
		if p.pos >= len(p.src) {
			return -1
		}
		p.pos++
		return int(p.src[p.pos-1])
	}
	c := read()
	if c == '\r' {
		if c = read(); c != '\n' {
			if c != -1 {
				p.pos--
			}
			c = '\r'
		}
	}
	if c == '\n' {
		p.line++
	}
	if c == -1 {
		p.eof = true
		p.line++
		c = '\n'
	}
	return c
}

// baseVar is git's get_base_var: what follows '['.
func (p *configParser) baseVar() ([]byte, bool) {
	var name []byte
	for {
		c := p.next()
		switch {
		case p.eof:
			return nil, false
		case c == ']':
			return name, true
		case gitSpace(c):
			return p.extendedBaseVar(name, c)
		case !isKeyChar(byte(c)) && c != '.':
			return nil, false
		}
		name = append(name, lower(byte(c)))
	}
}

// extendedBaseVar is git's get_extended_base_var: ` "sub"]`.
func (p *configParser) extendedBaseVar(name []byte, c int) ([]byte, bool) {
	for {
		if c == '\n' {
			return nil, false
		}
		if c = p.next(); !gitSpace(c) {
			break
		}
	}
	if c != '"' {
		return nil, false
	}
	name = append(name, '.')
	for {
		c := p.next()
		if c == '\n' {
			return nil, false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = p.next(); c == '\n' {
				return nil, false
			}
		}
		name = append(name, byte(c))
	}
	return name, p.next() == ']'
}

// entry is git's get_value: the rest of a name, then a bare end of line
// or "=" and a value.
func (p *configParser) entry(name []byte) (configEntry, bool) {
	line := p.line
	var c int
	for {
		c = p.next()
		if p.eof || !isKeyChar(byte(c)) {
			break
		}
		name = append(name, lower(byte(c)))
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	e := configEntry{key: cString(name), line: line}
	if c == '\n' {
		e.value, e.bare = "true", true
		return e, true
	}
	if c != '=' {
		return e, false
	}
	v, ok := p.value()
	e.value = cString(v)
	return e, ok
}

// value is git's parse_value.
func (p *configParser) value() ([]byte, bool) {
	var v []byte
	quote, comment := false, false
	space := 0
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				p.line--
				return nil, false
			}
			return v, true
		}
		if comment {
			continue
		}
		if gitSpace(c) && !quote {
			if len(v) > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			v = append(v, ' ')
		}
		switch c {
		case '\\':
			switch c = p.next(); c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return nil, false
			}
		case '"':
			quote = !quote
			continue
		}
		v = append(v, byte(c))
	}
}

// cString is what C code sees of b: the bytes before the first NUL.
func cString(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// gitSpace is git's isspace: space, tab, LF and CR only.
func gitSpace(c int) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func gitAlpha(c int) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

// asciiLower is C's strcasecmp view of s: only A-Z fold.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lower(c)
	}
	return string(b)
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

type wmFlags uint8

const (
	wmCaseFold wmFlags = 1 << iota
	wmPathname
)

// wildmatch is git's wildmatch(): *, ?, [...] (with ! or ^, ranges and
// [:class:]), \ escapes, and with wmPathname '*' stopping at '/' while
// '**' between slashes crosses them.
func wildmatch(pattern, text string, flags wmFlags) bool {
	return dowild(pattern, text, flags) == wmMatch
}

const (
	wmMatch           = 0
	wmNoMatch         = 1
	wmAbortAll        = -1
	wmAbortToStarStar = -2
)

// at reads s like a C string: 0 past its end.
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func dowild(p, text string, flags wmFlags) int {
	fold := flags&wmCaseFold != 0
	pathname := flags&wmPathname != 0
	pi, ti := 0, 0
	for ; pi < len(p); pi, ti = pi+1, ti+1 {
		pch, tch := p[pi], at(text, ti)
		if tch == 0 && pch != '*' {
			return wmAbortAll
		}
		if fold {
			tch, pch = lower(tch), lower(pch)
		}
		switch pch {
		case '\\':
			pi++
			if tch != at(p, pi) {
				return wmNoMatch
			}
		default:
			if tch != pch {
				return wmNoMatch
			}
		case '?':
			if pathname && tch == '/' {
				return wmNoMatch
			}
		case '*':
			var matchSlash bool
			pi++
			if at(p, pi) == '*' {
				prev := pi - 2
				for pi++; at(p, pi) == '*'; pi++ {
				}
				switch {
				case !pathname:
					matchSlash = true
				case (prev < 0 || p[prev] == '/') &&
					(at(p, pi) == 0 || at(p, pi) == '/' || at(p, pi) == '\\' && at(p, pi+1) == '/'):
					if at(p, pi) == '/' && dowild(p[pi+1:], text[ti:], flags) == wmMatch {
						return wmMatch
					}
					matchSlash = true
				}
			} else {
				matchSlash = !pathname
			}
			if at(p, pi) == 0 {
				if !matchSlash && strings.IndexByte(text[ti:], '/') >= 0 {
					return wmNoMatch
				}
				return wmMatch
			}
			if !matchSlash && at(p, pi) == '/' {
				slash := strings.IndexByte(text[ti:], '/')
				if slash < 0 {
					return wmNoMatch
				}
				ti += slash
				continue
			}
			for tch != 0 {
				if c := at(p, pi); c != '*' && c != '?' && c != '[' && c != '\\' {
					if fold {
						c = lower(c)
					}
					for tch = at(text, ti); tch != 0 && (matchSlash || tch != '/'); tch = at(text, ti) {
						if fold {
							tch = lower(tch)
						}
						if tch == c {
							break
						}
						ti++
					}
					if tch != c {
						return wmNoMatch
					}
				}
				if m := dowild(p[pi:], text[ti:], flags); m != wmNoMatch {
					if !matchSlash || m != wmAbortToStarStar {
						return m
					}
				} else if !matchSlash && tch == '/' {
					return wmAbortToStarStar
				}
				ti++
				tch = at(text, ti)
			}
			return wmAbortAll
		case '[':
			var m int
			if pi, m = matchClass(p, pi, tch, flags); m != wmMatch {
				return m
			}
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// matchClass matches tch against the bracket expression opening at p[pi]
// and returns the offset of its closing ']'.
func matchClass(p string, pi int, tch byte, flags wmFlags) (int, int) {
	fold := flags&wmCaseFold != 0
	pi++
	pch := at(p, pi)
	if pch == '^' {
		pch = '!'
	}
	negated := pch == '!'
	if negated {
		pi++
		pch = at(p, pi)
	}
	var prev byte
	matched := false
	for {
		switch {
		case pch == 0:
			return pi, wmAbortAll
		case pch == '\\':
			pi++
			if pch = at(p, pi); pch == 0 {
				return pi, wmAbortAll
			}
			if tch == pch {
				matched = true
			}
		case pch == '-' && prev != 0 && at(p, pi+1) != 0 && at(p, pi+1) != ']':
			pi++
			if pch = at(p, pi); pch == '\\' {
				pi++
				if pch = at(p, pi); pch == 0 {
					return pi, wmAbortAll
				}
			}
			if tch <= pch && tch >= prev {
				matched = true
			} else if fold && tch >= 'a' && tch <= 'z' {
				if u := tch - 'a' + 'A'; u <= pch && u >= prev {
					matched = true
				}
			}
			pch = 0
		case pch == '[' && at(p, pi+1) == ':':
			s := pi + 2
			end := s
			for at(p, end) != 0 && at(p, end) != ']' {
				end++
			}
			if at(p, end) == 0 {
				return end, wmAbortAll
			}
			if end-s-1 < 0 || p[end-1] != ':' {
				// no ":]": a literal '['
				if tch == '[' {
					matched = true
				}
				pch = '['
				break
			}
			in, ok := charClass(p[s:end-1], tch, fold)
			if !ok {
				return end, wmAbortAll
			}
			if in {
				matched = true
			}
			pi = end
			pch = 0
		default:
			if tch == pch {
				matched = true
			}
		}
		prev = pch
		pi++
		if pch = at(p, pi); pch == ']' {
			break
		}
	}
	if matched == negated || flags&wmPathname != 0 && tch == '/' {
		return pi, wmNoMatch
	}
	return pi, wmMatch
}

// charClass tests c against a [:name:] class with git's ctype (ASCII; space
// is space, tab, LF and CR).
func charClass(name string, c byte, fold bool) (in, ok bool) {
	upper := c >= 'A' && c <= 'Z'
	lowerc := c >= 'a' && c <= 'z'
	digit := c >= '0' && c <= '9'
	switch name {
	case "alnum":
		return upper || lowerc || digit, true
	case "alpha":
		return upper || lowerc, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return c > 0x20 && c < 0x7f, true
	case "lower":
		return lowerc, true
	case "print":
		return c >= 0x20 && c < 0x7f, true
	case "punct":
		return c > 0x20 && c < 0x7f && !upper && !lowerc && !digit, true
	case "space":
		return gitSpace(int(c)), true
	case "upper":
		return upper || fold && lowerc, true
	case "xdigit":
		return hexDigit(c) >= 0, true
	}
	return false, false
}

// PromisorRemotes returns the remotes a partial clone may ask for the
// objects it lacks, in the order git 2.39 asks them (promisor-remote.c):
// each remote with remote.<name>.promisor true or a
// remote.<name>.partialCloneFilter, in the order the configuration first
// names it, and last the remote extensions.partialClone names. None: the
// repository is not a partial clone. git reads extensions.partialClone
// from the repository's own configuration only; a partial clone writes it
// there, so the merged value is taken.
func (c *Config) PromisorRemotes() []string {
	var out []string
	add := func(name string) {
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, e := range c.entries {
		rest, ok := strings.CutPrefix(e.key, "remote.")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '.')
		if i <= 0 {
			continue
		}
		name, sub := rest[:i], rest[i+1:]
		switch sub {
		case "promisor":
			if b, err := ParseBool(e.value); err == nil && b {
				add(name)
			}
		case "partialclonefilter":
			add(name)
		}
	}
	if pc, ok := c.Get("extensions.partialClone"); ok && pc != "" {
		out = slices.DeleteFunc(out, func(n string) bool { return n == pc })
		out = append(out, pc)
	}
	return out
}
