//go:build unix

package main

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByOther reports whether fi belongs to another user than the process's, and which.
func ownedByOther(fi fs.FileInfo) (uid int, other bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), int(st.Uid) != os.Getuid()
}
