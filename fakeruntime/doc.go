// Package fakeruntime is an in-memory container runtime: pod sandboxes and containers that are
// created, run, exit and are removed, with exit codes, restart counts, latencies on the clock and
// scriptable failures.
//
// It mirrors the kubelet's kuberuntime manager (pkg/kubelet/kuberuntime) on top of a fake CRI:
// SyncPod is computePodActions plus its execution (kill the pod if its sandbox must be recreated,
// create the sandbox, pull images with the IfNotPresent, Always and Never policies and the image
// pull back-off, run init containers one at a time and sidecars alongside them
// (computeInitContainerActions), kill and restart running containers whose spec hash changed,
// start regular containers, hold restarts back with the crash-loop back-off, run postStart hooks),
// KillPod is killPodWithSyncResult (preStop hooks, the sidecars' termination ordering, the 2s
// minimum stop), and GetPods and GetPodStatus are what the PLEG relists. The back-offs are kubecontainer.Backoff. The runtime records the
// Kubernetes events kuberuntime records (Pulling, Started, Killing, BackOff...) through
// Options.Recorder, at the virtual instant each step happens.
//
// # Time: busy until
//
// Every call returns at once in CPU time. Its effects happen at the virtual instants they would
// happen in a real runtime, and Result.Done is when the kubelet's blocking call would have
// returned. A SyncPod at t0 with the default latencies records:
//
//	t0        sync                 computePodActions decided what to do
//	t0+0.5s   sandbox ready        createPodSandbox
//	t0+0.5s   pull image           EnsureImageExists
//	t0+2.5s   pulled, created      startContainer
//	t0+3.0s   started              the container is running; Result.Done
//	t0+8.0s   exited               if scripted to exit after 5s
//
// GetPods and GetPodStatus show an effect only once the clock has reached it. NextWake reports
// the next scheduled effect and Advance applies every effect that is due, tracing each; every
// other call applies due effects first, so no caller sees a stale state.
//
// # Stopping containers
//
// KillPod stops each running container with the grace period the kubelet's killContainer uses. A
// container exits after Latencies.ContainerStop with exit code 0 (ExitCodeStopped) if that is
// within its grace period: it handled SIGTERM. Otherwise, or when it is scripted to ignore
// SIGTERM, it is killed at the deadline with exit code 137 (ExitCodeKilled).
//
// # Scripting
//
// Tests and scenarios script containers with SetBehavior (exit with a code after a time, ignore
// SIGTERM), ContainerExit (the process ends now), FailImagePull (the next n pulls of an image fail)
// and Down (every call fails with ErrRuntimeDown for a while). A pod can also script itself with
// annotations, read when each container starts:
//
//	minikubelet.io/exit-after.<container>: "5s"   every run exits by itself after this Go duration
//	minikubelet.io/exit-code.<container>: "1"     with this exit code (0-255, default 0)
//
//	minikubelet.io/post-start.<container>: "fail 3s"   the postStart hook's result and duration
//	minikubelet.io/pre-stop.<container>: "10s"         the preStop hook's
//
// A Behavior set with SetBehavior (or a hook set with SetHook) wins over the annotations. A value that does not parse makes
// the container fail to start with ErrBadAnnotation (the kubelet's CreateContainerConfigError).
//
// # Determinism
//
// Container IDs are "c-000001", "c-000002" ... and sandbox IDs "s-000001" ... in the order SyncPod
// creates them. A sandbox's IP is derived from the pod's UID (10.88.x.y; none for a host-network
// pod), and GetPodStatus reports it while the pod's newest sandbox is ready: what an HTTP hook
// without a host is aimed at. GetPods lists pods by UID and their containers by ID; GetPodStatus lists instances
// newest first. Effects at the same instant apply in the order they were scheduled.
package fakeruntime
