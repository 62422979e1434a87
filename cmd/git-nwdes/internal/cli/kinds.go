package cli

import (
	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/ledger"
	"github.com/nwdes/nwdes/swarm"
	"github.com/nwdes/nwdes/trace"
	"github.com/nwdes/nwdes/trial"
)

// registry declares every kind of record and every ref this build keeps
// (gitstore.Registry): each package that stores records adds its own.
// display, when set, is the display notes ref (git config nwdes.displayRef).
func registry(display gitstore.RefName) (*gitstore.Registry, error) {
	declare := []func(*gitstore.Registry) error{examine.Register, swarm.Register, ledger.Register, trace.Register, trial.Register}
	if display != "" {
		declare = append(declare, examine.RegisterDisplay(display))
	}
	return gitstore.NewRegistry(declare...)
}
