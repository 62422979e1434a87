package hooks

import "github.com/nwdes/nwdes/gitstore/gitrepo"

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
		for _, key := range []string{"core.hooksPath", "nwdes.protect", "nwdes.allowedSignersFile"} {
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
	return s, nil
}
