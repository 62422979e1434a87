// Package judge is the one place nwdes decides whether a commit is
// accepted. The pre-push hook, the server's pre-receive hook, status (what
// CI runs) and the exports all ask Judge, and verify asks RulesFor (the
// rules Judge holds each feature's examination to), with every input
// named in a Question: the commit, the ref it is judged for, the protected branch's
// tip it is judged against (whose contracts must still exist and whose
// signing policy applies), a server's own policy, and the record tips read.
// A rule added here holds on every surface; a rule added anywhere else is a
// bypass.
//
// The rules, in order, for each feature whose contract is at
// .nwave/features/<feature>.md in the commit:
//
//   - the newest published examination at the commit holds up against it
//     (examine.Reader.Standing: same contract blob, one row per
//     expectation, the outcome its rows derive);
//   - its verdicts are bound by the contract (examine.Binding): an
//     abandoned criterion is never met, and an expectation with an oracle
//     is met only when that oracle is MET at the commit, unless the
//     examination was closed with advisory gates; and, where the judging
//     side sets nwdes.gates.proof=required, only when that oracle is
//     proven (NOT-MET at a base, MET at the commit: GateVacuous,
//     GateUnproven otherwise);
//   - under a signing policy, it is signed by a key the policy allows for
//     the feature, and that key is neither the key that signed the
//     candidate commit nor one the policy names as its author or committer;
//   - an examination a swarm worker made (it names its examiner) is not
//     by a worker whose identity is the commit's author's or committer's,
//     with or without a policy: nobody certifies their own work.
//
// And every contract the protected branch held (or, judged against
// nothing, a parent held) is still there.
//
// Judge reads through judge.Store (examine.Reading and the candidate's
// parents), not the git store.
//
// Layering: imports examine, gitstore, trust, refusal and internal/text;
// hooks, report and the CLI import it.
package judge
