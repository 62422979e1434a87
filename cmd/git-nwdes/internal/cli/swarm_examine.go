package cli

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/examine/workspace"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/swarm"
)

// examining is what swarm run's supervisor runs examine cards with: the
// workspace and bundle examine prompt makes, made in the job's directory,
// and the examiner examine close uses, signing when git config nwdes.sign
// says the repository signs (with the key git signs with: the
// supervisor's operator signs for the worker, whom the examination
// names).
func (s *session) examining(c *cli.Context, st *gitstore.Store) *swarm.Examining {
	return &swarm.Examining{
		Prompt: func(ctx context.Context, t examine.Target, job string) (*swarm.ExamineBundle, error) {
			p := &workspace.Prompter{Store: st, TempDir: job, Job: job, Now: s.env.Now}
			b, err := p.Prompt(ctx, t)
			if err != nil {
				return nil, err
			}
			cand, err := oid.Parse(b.Candidate)
			if err != nil {
				return nil, err
			}
			tree, err := oid.Parse(b.Projection)
			if err != nil {
				return nil, err
			}
			proj, err := examine.RecordedProjection(st, cand, tree)
			if err != nil {
				return nil, err
			}
			out := &swarm.ExamineBundle{Text: b.Text(), Workspace: b.Workspace}
			for _, f := range proj.Files {
				out.Public = append(out.Public, f.Path)
			}
			return out, nil
		},
		Examiner: func() (*examine.Examiner, error) {
			x, err := s.examinerOn(st)
			if err != nil {
				return nil, err
			}
			if x.Sign, x.SignKey, err = s.signer(c); err != nil {
				return nil, err
			}
			return x, nil
		},
	}
}
