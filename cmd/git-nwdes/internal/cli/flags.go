package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"
)

// flagValue is a flag's value, checked as it is set. The flag package
// reports a value that Set refuses only as text ("invalid value … for
// flag -x: …"); the refusal is kept here, typed, so that the usage error
// says what the value lacks without reading that text back.
type flagValue struct {
	name  string
	text  string // the value as urfave/cli's c.Duration and c.Int parse it
	parse func(name, value string) (string, error)
	bad   error // what Set refused last
}

func (v *flagValue) Set(s string) error {
	t, err := v.parse(v.name, s)
	if err != nil {
		v.bad = err
		return err
	}
	v.text, v.bad = t, nil
	return nil
}

func (v *flagValue) String() string { return v.text }

// flagValueError is a value a flag does not take.
type flagValueError struct {
	flag, value string
	why         string
}

func (e *flagValueError) Error() string {
	if e.why != "" {
		return fmt.Sprintf("--%s %s: %s", e.flag, e.value, e.why)
	}
	return fmt.Sprintf("--%s %q is not a valid value", e.flag, e.value)
}

func parseDuration(name, s string) (string, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		if _, numErr := strconv.ParseFloat(s, 64); numErr == nil {
			return "", &flagValueError{flag: name, value: s, why: fmt.Sprintf("a duration needs a unit, as in %ss, %sm or %sh", s, s, s)}
		}
		return "", &flagValueError{flag: name, value: s}
	}
	return d.String(), nil
}

func parseInt(name, s string) (string, error) {
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil {
		return "", &flagValueError{flag: name, value: s}
	}
	return strconv.FormatInt(n, 10), nil
}

// durationFlag is a duration flag (read with c.Duration) whose bad value
// is a typed usage error; a zero default shows no default in the help.
func durationFlag(name, usage string, def time.Duration) *cli.GenericFlag {
	v := &flagValue{name: name, parse: parseDuration}
	if def != 0 {
		v.text = def.String()
	}
	return &cli.GenericFlag{Name: name, Usage: usage, Value: v}
}

// intFlag is an int flag (read with c.Int) whose bad value is a typed
// usage error; a zero default shows no default in the help.
func intFlag(name, usage string, def int) *cli.GenericFlag {
	v := &flagValue{name: name, parse: parseInt}
	if def != 0 {
		v.text = strconv.Itoa(def)
	}
	return &cli.GenericFlag{Name: name, Usage: usage, Value: v}
}

// hidden leaves f out of the help.
func hidden(f *cli.GenericFlag) *cli.GenericFlag { f.Hidden = true; return f }

// badFlagValue returns what a flag of cmd refused to be set to, if any.
func badFlagValue(flags []cli.Flag) error {
	for _, f := range flags {
		if g, ok := f.(*cli.GenericFlag); ok {
			if v, ok := g.Value.(*flagValue); ok && v.bad != nil {
				return v.bad
			}
		}
	}
	return nil
}
