package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nwdes/nwdes/refusal"
)

// DeclarationPath is the committed declaration of a candidate's public
// commands. Only its committed blob is read, never the working tree.
const DeclarationPath = ".nwave/examine.json"

// NamePattern is the rule every declared command name follows.
const NamePattern = "[A-Za-z0-9][A-Za-z0-9_-]*"

// Command is one declared public command: the name the examiner probes it
// by, and the relative path of the executable the candidate's build wrote.
type Command struct {
	Name string
	Path string
}

// Declaration is a parsed .nwave/examine.json. Build is free text shown
// only in remedies; nwdes never runs it.
type Declaration struct {
	Commands []Command
	Build    string
}

// Names returns the declared command names in declaration order.
func (d *Declaration) Names() []string {
	names := make([]string, len(d.Commands))
	for i, c := range d.Commands {
		names[i] = c.Name
	}
	return names
}

// declarationRemedy is what every refusal of the declaration's shape says.
const declarationRemedy = `declare public commands as {"commands": [{"name": "greet", "path": "bin/greet"}], "build": "the build that writes bin/greet"} in ` + DeclarationPath

// ParseDeclaration reads a committed .nwave/examine.json: one JSON object
// holding a commands list and an optional build text. Each command entry
// has exactly the keys name and path; a name matches NamePattern and is
// unique; a path follows the host's path rules (see ValidPath). Anything
// else — invalid JSON, data after the object, a key other than commands
// and build, a key given twice at any level, a build that is not text —
// is refused with InputUnreadable naming .nwave/examine.json and the first
// violation in document order.
func ParseDeclaration(b []byte) (*Declaration, error) {
	return parseDeclaration(b, runtime.GOOS)
}

func parseDeclaration(b []byte, goos string) (*Declaration, error) {
	p := &declParser{src: b, dec: json.NewDecoder(bytes.NewReader(b)), goos: goos}
	p.dec.UseNumber()
	d, err := p.document()
	if err != nil {
		return nil, refusal.NewUnreadable(refusal.InputUnreadable, declarationRemedy, "%s: %s", DeclarationPath, err)
	}
	return d, nil
}

// declParser walks the document token by token, because encoding/json
// keeps the last of two equal keys without a word and turns an unpaired
// surrogate escape into U+FFFD.
type declParser struct {
	src  []byte
	dec  *json.Decoder
	goos string
}

// violation is the first thing wrong with a declaration; its text follows
// the file name in the refusal's detail.
type violation string

func (v violation) Error() string { return string(v) }

func violationf(format string, args ...any) error { return violation(fmt.Sprintf(format, args...)) }

func (p *declParser) token() (json.Token, error) {
	tok, err := p.dec.Token()
	if err == io.EOF {
		return nil, violation("the document ends early")
	}
	if err != nil {
		return nil, violationf("the document is not valid JSON: %v", err)
	}
	return tok, nil
}

// stringToken reads a token that must be a string and reports whether its
// literal is sound text: valid UTF-8 with no unpaired surrogate escape.
func (p *declParser) stringToken(what string) (s string, sound bool, err error) {
	start := p.dec.InputOffset()
	tok, err := p.token()
	if err != nil {
		return "", false, err
	}
	s, ok := tok.(string)
	if !ok {
		return "", false, violationf("%s is not a string", what)
	}
	lit := p.src[start:p.dec.InputOffset()]
	if q := bytes.IndexByte(lit, '"'); q >= 0 {
		lit = lit[q:]
	}
	return s, soundLiteral(lit), nil
}

func (p *declParser) document() (*Declaration, error) {
	tok, err := p.dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, violation("the document is not a JSON object")
	}
	d := &Declaration{}
	seen := map[string]bool{}
	for p.dec.More() {
		key, _, err := p.stringToken("a key")
		if err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, violationf("the key %q is given twice", key)
		}
		seen[key] = true
		switch key {
		case "commands":
			if d.Commands, err = p.commands(); err != nil {
				return nil, err
			}
		case "build":
			if d.Build, _, err = p.stringToken("build"); err != nil {
				return nil, err
			}
		default:
			return nil, violationf("the key %q is neither commands nor build", key)
		}
	}
	if _, err := p.token(); err != nil { // the closing brace
		return nil, err
	}
	if !seen["commands"] {
		return nil, violation("the commands list is missing")
	}
	switch _, err := p.dec.Token(); {
	case err == io.EOF:
		return d, nil
	case err != nil:
		return nil, violationf("data follows the object: %v", err)
	default:
		return nil, violation("data follows the object")
	}
}

func (p *declParser) commands() ([]Command, error) {
	tok, err := p.token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('[') {
		return nil, violation("commands is not a list")
	}
	cmds := []Command{}
	names := map[string]int{}
	for p.dec.More() {
		n := len(cmds) + 1
		c, err := p.command(n)
		if err != nil {
			return nil, err
		}
		if first, dup := names[c.Name]; dup {
			return nil, violationf("command %d repeats the name %q of command %d", n, c.Name, first)
		}
		names[c.Name] = n
		cmds = append(cmds, c)
	}
	_, err = p.token() // the closing bracket
	return cmds, err
}

func (p *declParser) command(n int) (Command, error) {
	var c Command
	tok, err := p.token()
	if err != nil {
		return c, err
	}
	if tok != json.Delim('{') {
		return c, violationf("command %d is not an object", n)
	}
	seen := map[string]bool{}
	for p.dec.More() {
		key, _, err := p.stringToken("a key")
		if err != nil {
			return c, err
		}
		if seen[key] {
			return c, violationf("command %d gives the key %q twice", n, key)
		}
		seen[key] = true
		switch key {
		case "name":
			name, _, err := p.stringToken(fmt.Sprintf("the name of command %d", n))
			if err != nil {
				return c, err
			}
			if !ValidName(name) {
				return c, violationf("command %d: the name %q does not match %s", n, name, NamePattern)
			}
			c.Name = name
		case "path":
			path, sound, err := p.stringToken(fmt.Sprintf("the path of command %d", n))
			if err != nil {
				return c, err
			}
			if !sound {
				return c, violationf("command %d: the path %q is not valid UTF-8 text", n, path)
			}
			if why := pathProblem(path, p.goos); why != "" {
				return c, violationf("command %d: the path %q %s", n, path, why)
			}
			c.Path = path
		default:
			return c, violationf("command %d holds the key %q, which is neither name nor path", n, key)
		}
	}
	if _, err := p.token(); err != nil { // the closing brace
		return c, err
	}
	for _, key := range []string{"name", "path"} {
		if !seen[key] {
			return c, violationf("command %d has no %s", n, key)
		}
	}
	return c, nil
}

// soundLiteral reports whether a JSON string literal, quotes included, is
// valid UTF-8 and every \u escape of a surrogate is one half of a pair.
func soundLiteral(lit []byte) bool {
	if !utf8.Valid(lit) {
		return false
	}
	hex := func(i int) (rune, bool) {
		if i+6 > len(lit) || lit[i] != '\\' || lit[i+1] != 'u' {
			return 0, false
		}
		r, err := strconv.ParseUint(string(lit[i+2:i+6]), 16, 32)
		return rune(r), err == nil
	}
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' || i+1 >= len(lit) {
			continue
		}
		if lit[i+1] != 'u' {
			i++
			continue
		}
		r, ok := hex(i)
		switch {
		case !ok:
			return false
		case r >= 0xdc00 && r <= 0xdfff:
			return false
		case r >= 0xd800 && r <= 0xdbff:
			lo, ok := hex(i + 6)
			if !ok || lo < 0xdc00 || lo > 0xdfff {
				return false
			}
			i += 11
		default:
			i += 5
		}
	}
	return true
}

// ValidName reports whether name matches NamePattern.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// ValidPath reports why path may not name a declared executable on this
// host, or nil when it may. On every host a path is refused when it is
// empty, not valid UTF-8, starts with "/", holds a NUL or other control
// character, or has a "/"-separated segment that is empty, "." or "..".
// On Windows it is also refused when it starts with "\" or with a drive
// letter and a colon, or has a "\"-separated segment that is empty, "."
// or ".." (segments split on either separator). Every other name is admitted: on POSIX a backslash or a colon
// is an ordinary character of a file name.
func ValidPath(path string) error {
	if why := pathProblem(path, runtime.GOOS); why != "" {
		return errors.New(why)
	}
	return nil
}

func pathProblem(p, goos string) string {
	switch {
	case p == "":
		return "is empty"
	case !utf8.ValidString(p):
		return "is not valid UTF-8 text"
	case strings.HasPrefix(p, "/"):
		return "is absolute"
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return "holds a control character"
	case badSegment(p, "/"):
		return `has an empty, "." or ".." segment`
	}
	if goos != "windows" {
		return ""
	}
	switch {
	case strings.HasPrefix(p, `\`):
		return `starts with "\" (a UNC or device path)`
	case len(p) >= 2 && p[1] == ':' && ('a' <= p[0] && p[0] <= 'z' || 'A' <= p[0] && p[0] <= 'Z'):
		return "starts with a drive"
	case badSegment(strings.ReplaceAll(p, `\`, "/"), "/"):
		return `has an empty, "." or ".." segment between backslashes`
	}
	return ""
}

func badSegment(p, sep string) bool {
	for _, seg := range strings.Split(p, sep) {
		if seg == "" || seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// ChmodCommand is the command that gives path its executable bit, with
// path single-quoted for a POSIX shell so that it runs exactly as printed
// for every admitted path, one that starts with "-" included.
func ChmodCommand(path string) string {
	return "chmod +x -- " + shellQuote(path)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
