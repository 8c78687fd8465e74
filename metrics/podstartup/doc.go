// Package podstartup measures how long pods take to start, as the kubelet's pod startup latency
// tracker does (pkg/kubelet/util/pod_startup_latency_tracker.go): from the pod's creation in the
// API to the moment the kubelet, watching the API server, sees its own status write that shows
// every container running, with the time spent pulling images taken out for the SLI.
//
// It feeds kubelet_pod_start_sli_duration_seconds, kubelet_pod_start_total_duration_seconds and
// kubelet_first_network_pod_start_sli_duration_seconds. Four parts of the kubelet report to it:
// the pod config (a pod observed on the watch), the image manager (a pull starts or ends), and the
// status manager (a status write that changed the pod, and a status forgotten).
package podstartup
