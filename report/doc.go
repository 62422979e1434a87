// Package report says where a commit stands, for CI and reviewers: Status
// (per feature with a contract: the newest examination's outcome and
// record, gate evidence, verify verdict) and its exports — JUnit XML, a
// Markdown job summary, and an in-toto Statement v1 whose predicate carries
// the acceptance briefs. Forges show neither custom notes nor custom refs;
// these exports are how verdicts reach a merge request.
//
// Evaluate reads through judge.Store. Features lists a commit's contracts
// for the features verb: expectations, oracles and the newest outcome.
//
// Layering: report imports examine, judge, refusal and internal/text;
// the CLI imports it. It reads one snapshot of each ref and never walks
// history.
package report
