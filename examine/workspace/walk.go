package workspace

import (
	"fmt"
	"os"
	"time"

	"github.com/nwdes/nwdes/refusal"
)

// Cause is the machine-readable reason a declared executable cannot run.
// Each cause has its own remedy; every one is refused with InputUnreadable
// naming the declared path.
type Cause string

const (
	// CauseSymlink: the declared file is a symbolic link.
	CauseSymlink Cause = "symlink"
	// CauseSymlinkedDirectory: a name before the last is a symbolic link.
	CauseSymlinkedDirectory Cause = "symlinked_directory"
	// CauseNotADirectory: a name before the last is a regular file (or
	// anything else that is not a directory).
	CauseNotADirectory Cause = "not_a_directory"
	// CauseNotSearchable: a directory on the path denies the user search
	// permission.
	CauseNotSearchable Cause = "not_searchable"
	// CauseMissing: a name on the path does not exist; the build has not
	// written the file.
	CauseMissing Cause = "missing"
	// CauseNotARegularFile: the declared entry exists but is a directory,
	// a device, a FIFO or a socket.
	CauseNotARegularFile Cause = "not_a_regular_file"
	// CauseNotExecutable: the declared file has no executable bit.
	CauseNotExecutable Cause = "not_executable"
	// CauseNameTooLong: a name is longer than the file system holds.
	CauseNameTooLong Cause = "name_too_long"
	// CauseNoexec: the declared file is on a file system mounted noexec.
	CauseNoexec Cause = "noexec"
	// CauseNoDescriptorWalk: the platform cannot open names relative to a
	// directory descriptor without following links, so nothing is walked.
	CauseNoDescriptorWalk Cause = "no_descriptor_walk"
	// CauseChanged: the file at the path is not the one verified before.
	CauseChanged Cause = "changed"
	// CauseInvalidPath: the path breaks the declaration's path rules.
	CauseInvalidPath Cause = "invalid_path"
	// CauseUnopenable: the system refused to open a name for another
	// reason, named in the detail.
	CauseUnopenable Cause = "unopenable"
)

// WalkError is the refusal of a declared executable: the refusal itself
// (InputUnreadable) with its cause, the declared path and the entry the
// cause is about (the link, the directory or the file; "." is the
// candidate's top level). errors.As finds the *refusal.Error inside, and
// errors.Is the system error that led to it, if any.
type WalkError struct {
	Path    string
	At      string
	Cause   Cause
	Refusal *refusal.Error
}

func (e *WalkError) Error() string { return e.Refusal.Error() }

// Unwrap returns the refusal.
func (e *WalkError) Unwrap() error { return e.Refusal }

// walkError builds the refusal for cause at the entry at of the declared
// path, err being the system error behind it or nil.
func walkError(cause Cause, path, at, build string, err error) *WalkError {
	what, remedy := describe(cause, path, at, build)
	if err != nil && cause == CauseUnopenable {
		what += ": " + err.Error()
	}
	r := refusal.NewUnreadable(refusal.InputUnreadable, remedy,
		"declared executable %q: %s (cause %s)", path, what, cause)
	if err != nil {
		r.Wrap(err)
	}
	return &WalkError{Path: path, At: at, Cause: cause, Refusal: r}
}

// describe says what is wrong and what to do about it.
func describe(cause Cause, path, at, build string) (what, remedy string) {
	then := runBuild(build)
	switch cause {
	case CauseSymlink:
		return "it is a symbolic link", fmt.Sprintf("remove the symbolic link %q, then %s", at, then)
	case CauseSymlinkedDirectory:
		return fmt.Sprintf("%q on its path is a symbolic link", at),
			fmt.Sprintf("remove the symbolic link %q, then %s", at, then)
	case CauseNotADirectory:
		return fmt.Sprintf("%q on its path is not a directory", at),
			fmt.Sprintf("remove %q, then %s", at, then)
	case CauseNotSearchable:
		return fmt.Sprintf("the directory %q denies search permission", at),
			fmt.Sprintf("give search permission on the directory %q", at)
	case CauseMissing:
		if at != path {
			return fmt.Sprintf("%q on its path does not exist", at),
				fmt.Sprintf("%s so that %q becomes a regular file", then, path)
		}
		return "it does not exist", fmt.Sprintf("%s so that %q becomes a regular file", then, path)
	case CauseNotARegularFile:
		return "it is not a regular file", fmt.Sprintf("replace %q with the regular file the build writes: %s", path, then)
	case CauseNotExecutable:
		return "it has no executable bit", ChmodCommand(path)
	case CauseNameTooLong:
		return fmt.Sprintf("the name %q is longer than the file system holds", at),
			fmt.Sprintf("shorten the name %q in the build and in %s", at, DeclarationPath)
	case CauseNoexec:
		return "its file system is mounted noexec",
			"build into a checkout on a file system that is not mounted noexec"
	case CauseNoDescriptorWalk:
		return "this platform cannot open it without following links",
			"examine the candidate on a platform that has descriptor-relative no-follow opens"
	case CauseChanged:
		return "the file at the path changed after its descriptor launch was refused",
			"examine again, and leave the built file unchanged while it is probed"
	case CauseInvalidPath:
		return "the path breaks the declaration's path rules", declarationRemedy
	}
	return fmt.Sprintf("%q cannot be opened", at), fmt.Sprintf("make %q openable, then %s", at, then)
}

// runBuild is the remedy's call to build, quoting the declaration's build
// text when it names one.
func runBuild(build string) string {
	if build == "" {
		return "run the candidate's build"
	}
	return fmt.Sprintf("run the build the declaration names (%q)", build)
}

// Identity is what pins a verified file: a second verification of the
// same path must find the same device, inode, size and modification time.
type Identity struct {
	Dev     uint64
	Ino     uint64
	Size    int64
	ModTime time.Time
}

// Opened is a declared executable that passed the walk: an O_PATH
// descriptor of the very file checked (for a descriptor start) and its
// identity. Close releases the descriptor.
type Opened struct {
	File     *os.File
	Path     string
	Identity Identity
}

// Same reports whether other is the same file, by identity: the check the
// path start makes after a refused descriptor start.
func (o *Opened) Same(other *Opened) bool {
	return o != nil && other != nil &&
		o.Identity.Dev == other.Identity.Dev && o.Identity.Ino == other.Identity.Ino &&
		o.Identity.Size == other.Identity.Size && o.Identity.ModTime.Equal(other.Identity.ModTime)
}

// Close closes the descriptor.
func (o *Opened) Close() error { return o.File.Close() }

// Reverify walks path again and accepts the file only when it is the one
// verified before (Same); a file that differs is refused with
// CauseChanged, and every walk refusal stands as it is.
func Reverify(root, path, build string, before *Opened) (*Opened, error) {
	again, err := OpenDeclared(root, path, build)
	if err != nil {
		return nil, err
	}
	if !before.Same(again) {
		again.Close()
		return nil, walkError(CauseChanged, path, path, build, nil)
	}
	return again, nil
}
