package fakeruntime

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// containerConfigError is the part of kuberuntime's generateContainerConfig that can fail on a
// fake node: verifyRunAsNonRoot. An image carries no user here, and the kubelet treats an image
// without one as running as root, so runAsNonRoot without a non-zero runAsUser fails. Environment
// variables from ConfigMaps and Secrets are not resolved, so they never fail.
func containerConfigError(pod *v1.Pod, c *v1.Container) error {
	var nonRoot *bool
	var user *int64
	if sc := pod.Spec.SecurityContext; sc != nil {
		nonRoot, user = sc.RunAsNonRoot, sc.RunAsUser
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsNonRoot != nil {
			nonRoot = sc.RunAsNonRoot
		}
		if sc.RunAsUser != nil {
			user = sc.RunAsUser
		}
	}
	if nonRoot == nil || !*nonRoot {
		return nil
	}
	if user != nil {
		if *user == 0 {
			return fmt.Errorf("container's runAsUser breaks non-root policy (pod: %q, container: %s)", formatPod(pod), c.Name)
		}
		return nil
	}
	return fmt.Errorf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", formatPod(pod), c.Name)
}

// startErrorMessage is what containerd says when the container's process cannot be started: the
// executable is not there. The first word of the command names it, else the container.
func startErrorMessage(c *v1.Container) string {
	exe := c.Name
	if len(c.Command) > 0 {
		exe = c.Command[0]
	} else if len(c.Args) > 0 {
		exe = c.Args[0]
	}
	return fmt.Sprintf("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: "+
		"unable to start container process: error during container init: exec: %q: executable file not found in $PATH: unknown", exe)
}
