package main

import (
	"os"
	"path/filepath"
)

// defaultRootDir is where `run` keeps its sockets and checkpoints unless --root-dir says
// otherwise: the kubelet's /var/lib/kubelet needs root, so minikubelet uses the user's state
// directory ($XDG_STATE_HOME, else ~/.local/state).
func defaultRootDir() string {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return filepath.Join(os.TempDir(), "minikubelet")
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "minikubelet")
}
