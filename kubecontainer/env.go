package kubecontainer

// EnvVar is one variable of a container's environment, as the kubelet hands it to the runtime
// (kubecontainer.EnvVar): resolved, with its references to ConfigMaps, Secrets, fields and
// resources replaced by their values.
type EnvVar struct {
	Name  string
	Value string
}
