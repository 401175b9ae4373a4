//go:build !linux

package isolated

import "os/exec"

// setProcessAttributes has nothing to add here: the deadline still kills the
// child.
func setProcessAttributes(*exec.Cmd) {}

// limitCPU relies on the parent's deadline where the kernel limit is not set.
func limitCPU(int) {}
