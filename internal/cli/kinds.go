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
func registry() (*gitstore.Registry, error) {
	return gitstore.NewRegistry(examine.Register, swarm.Register, ledger.Register, trace.Register, trial.Register)
}
