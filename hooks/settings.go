package hooks

import (
	"strings"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/refusal"
)

// Lookup asks git itself for every value of a key; it is used only when
// ReadConfig reports (Conditional) that it could not know git's answer.
type Lookup func(key string) ([]string, error)

// Settings are what the hook and the installer take from git config.
type Settings struct {
	// Dir is where git runs hooks from; HooksPath is core.hooksPath as
	// configured ("" when unset).
	Dir       string
	HooksPath string
	Policy    Policy
	// DefaultBranch is git config nwdes.defaultBranch as a full ref name
	// ("" when unset): the server judges new protected branches against it
	// (see Receive).
	DefaultBranch gitstore.RefName
}

// LoadSettings reads core.hooksPath and nwdes.protect as a git command in
// loc would see them; see SettingsFrom.
func LoadSettings(loc gitrepo.Location, getenv gitrepo.Getenv, ask Lookup) (*Settings, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	cfg, err := gitrepo.ReadConfig(loc, getenv)
	if err != nil {
		return nil, err
	}
	return SettingsFrom(loc, cfg, getenv("HOME"), ask)
}

// SettingsFrom takes the settings from configuration already read. When
// the reader could not know git's answer (Conditional), both keys are
// asked of git through ask (when given).
func SettingsFrom(loc gitrepo.Location, cfg *gitrepo.Config, home string, ask Lookup) (*Settings, error) {
	if cfg.Conditional && ask != nil {
		exact := &gitrepo.Config{}
		for _, key := range []string{"core.hooksPath", "nwdes.protect", "nwdes.allowedSignersFile", "nwdes.defaultBranch", "nwdes.gates", "nwdes.gates.proof", "nwdes.push.records"} {
			vals, err := ask(key)
			if err != nil {
				return nil, err
			}
			for _, v := range vals {
				exact.Add(key, v)
			}
		}
		cfg = exact
	}
	s := &Settings{}
	s.Dir, s.HooksPath = Dir(loc, cfg, home)
	var err error
	if s.Policy, err = PolicyFrom(cfg); err != nil {
		return nil, err
	}
	if v, ok := cfg.Get("nwdes.defaultBranch"); ok {
		if s.DefaultBranch, err = branchName(v); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// branchName reads a branch as nwdes.protect does: a name that does not
// start with refs/ is a branch (main means refs/heads/main).
func branchName(v string) (gitstore.RefName, error) {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "refs/") {
		v = "refs/heads/" + v
	}
	if err := gitstore.RefName(v).Validate(); err != nil || v == "refs/heads/" {
		return "", refusal.New(refusal.ConfigurationMalformed,
			"set it to the branch new protected branches are judged against: git config nwdes.defaultBranch main",
			"git config nwdes.defaultBranch %q is not a branch name", v)
	}
	return gitstore.RefName(v), nil
}
