package syncloop

import (
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/status"
)

// The Loop is what the pod workers drive.
var _ podworkers.Syncer = (*Loop)(nil)

// The Loop tells the status manager when a pod may still run containers.
var _ status.DeletionSafety = (*Loop)(nil)
