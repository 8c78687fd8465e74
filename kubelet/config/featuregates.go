package config

import (
	"fmt"
	"slices"
)

// The kubelet feature gates minikubelet models: the ones its behaviour depends on.
const (
	// KubeletCrashLoopBackOffMax (beta, on in v1.35) lets crashLoopBackOff.maxContainerRestartPeriod
	// cap the crash-loop back-off.
	KubeletCrashLoopBackOffMax = "KubeletCrashLoopBackOffMax"
	// ReduceDefaultCrashLoopBackOffDecay (alpha, off) starts the crash-loop back-off at 1s and
	// caps it at 60s.
	ReduceDefaultCrashLoopBackOffDecay = "ReduceDefaultCrashLoopBackOffDecay"
	// KubeletFineGrainedAuthz (beta, on in v1.35) authorizes the kubelet server's /pods,
	// /runningpods, /healthz and /configz as subresources of their own before nodes/proxy.
	KubeletFineGrainedAuthz = "KubeletFineGrainedAuthz"
)

// ModelledGates lists the feature gates minikubelet acts on, sorted. The v1.35 kubelet's other
// gates are accepted and do nothing.
var ModelledGates = []string{KubeletCrashLoopBackOffMax, KubeletFineGrainedAuthz, ReduceDefaultCrashLoopBackOffDecay}

// The two gates that set every alpha or beta gate not named on its own.
const (
	allAlpha = "AllAlpha"
	allBeta  = "AllBeta"
)

// FeatureGates are KubeletConfiguration's featureGates, name to on or off.
type FeatureGates map[string]bool

// Enabled reports whether the gate is on: as set, or else by AllAlpha or AllBeta for a gate at
// that stage, or else its v1.35 default.
func (g FeatureGates) Enabled(name string) bool {
	if on, ok := g[name]; ok {
		return on
	}
	spec := knownGates[name]
	switch spec.stage {
	case alpha:
		if on, ok := g[allAlpha]; ok {
			return on
		}
	case beta:
		if on, ok := g[allBeta]; ok {
			return on
		}
	}
	return spec.on
}

// validate checks the gates as the kubelet's feature gate does when the configuration sets them:
// every name must be one of the v1.35 kubelet's gates, and a gate locked to its default cannot
// be set to the other value. The kubelet stops at the first unknown name, in map order; here
// every problem is reported, sorted by name.
func (g FeatureGates) validate() []error {
	names := make([]string, 0, len(g))
	for name := range g {
		names = append(names, name)
	}
	slices.Sort(names)
	var errs []error
	for _, name := range names {
		on := g[name]
		spec, ok := knownGates[name]
		switch {
		case name == allAlpha || name == allBeta:
		case !ok:
			errs = append(errs, fmt.Errorf("unrecognized feature gate: %s", name))
		case spec.locked && on != spec.on:
			errs = append(errs, fmt.Errorf("cannot set feature gate %v to %v, feature is locked to %v", name, on, spec.on))
		}
	}
	return errs
}

// stage is a feature gate's maturity.
type stage int

const (
	ga stage = iota
	alpha
	beta
	deprecated
)

// gate is a feature gate as the v1.35 kubelet has it.
type gate struct {
	on     bool // its default
	locked bool // locked to its default
	stage  stage
}

// knownGates are the v1.35 kubelet's feature gates at emulation version 1.35: Kubernetes' own
// (pkg/features, which includes the generic API server's and client-go's) and the logging gates,
// each with its default, its lock and its stage, as --feature-gates and featureGates accept
// them. Gates that are pre-alpha in v1.35 are left out.
var knownGates = map[string]gate{
	"APIResponseCompression":                               {on: true, stage: beta},
	"APIServerIdentity":                                    {on: true, stage: beta},
	"APIServerTracing":                                     {on: true, locked: true, stage: ga},
	"APIServingWithRoutine":                                {stage: alpha},
	"AggregatedDiscoveryRemoveBetaType":                    {on: true, locked: true, stage: deprecated},
	"AllowDNSOnlyNodeCSR":                                  {stage: deprecated},
	"AllowInsecureKubeletCertificateSigningRequests":       {stage: deprecated},
	"AllowOverwriteTerminationGracePeriodSeconds":          {locked: true, stage: deprecated},
	"AllowParsingUserUIDFromCertAuth":                      {on: true, stage: beta},
	"AllowUnsafeMalformedObjectDeletion":                   {stage: alpha},
	"AnonymousAuthConfigurableEndpoints":                   {on: true, locked: true, stage: ga},
	"AnyVolumeDataSource":                                  {on: true, locked: true, stage: ga},
	"AuthorizeNodeWithSelectors":                           {on: true, locked: true, stage: ga},
	"AuthorizePodWebsocketUpgradeCreatePermission":         {on: true, stage: beta},
	"AuthorizeWithSelectors":                               {on: true, locked: true, stage: ga},
	"BtreeWatchCache":                                      {on: true, locked: true, stage: ga},
	"CBORServingAndStorage":                                {stage: alpha},
	"CPUManagerPolicyAlphaOptions":                         {stage: alpha},
	"CPUManagerPolicyBetaOptions":                          {on: true, stage: beta},
	"CPUManagerPolicyOptions":                              {on: true, locked: true, stage: ga},
	"CRDObservedGenerationTracking":                        {stage: beta},
	"CRDValidationRatcheting":                              {on: true, locked: true, stage: ga},
	"CSIMigrationPortworx":                                 {on: true, locked: true, stage: ga},
	"CSIServiceAccountTokenSecrets":                        {on: true, stage: beta},
	"CSIVolumeHealth":                                      {stage: alpha},
	"ChangeContainerStatusOnKubeletRestart":                {stage: deprecated},
	"ClearingNominatedNodeNameAfterBinding":                {on: true, stage: beta},
	"ClientsAllowCBOR":                                     {stage: alpha},
	"ClientsPreferCBOR":                                    {stage: alpha},
	"CloudControllerManagerWatchBasedRoutesReconciliation": {stage: alpha},
	"CloudControllerManagerWebhook":                        {stage: alpha},
	"ClusterTrustBundle":                                   {stage: beta},
	"ClusterTrustBundleProjection":                         {stage: beta},
	"ComponentFlagz":                                       {stage: alpha},
	"ComponentStatusz":                                     {stage: alpha},
	"ConcurrentWatchObjectDecode":                          {stage: beta},
	"ConsistentListFromCache":                              {on: true, locked: true, stage: ga},
	"ConstrainedImpersonation":                             {stage: alpha},
	"ContainerCheckpoint":                                  {on: true, stage: beta},
	"ContainerRestartRules":                                {on: true, stage: beta},
	"ContainerStopSignals":                                 {stage: alpha},
	"ContextualLogging":                                    {on: true, stage: beta},
	"CoordinatedLeaderElection":                            {stage: beta},
	"CrossNamespaceVolumeDataSource":                       {stage: alpha},
	"CustomCPUCFSQuotaPeriod":                              {stage: alpha},
	"CustomResourceFieldSelectors":                         {on: true, locked: true, stage: ga},
	"DRAAdminAccess":                                       {on: true, stage: beta},
	"DRAConsumableCapacity":                                {stage: alpha},
	"DRADeviceBindingConditions":                           {stage: alpha},
	"DRADeviceTaintRules":                                  {stage: alpha},
	"DRADeviceTaints":                                      {stage: alpha},
	"DRAExtendedResource":                                  {stage: alpha},
	"DRAPartitionableDevices":                              {stage: alpha},
	"DRAPrioritizedList":                                   {on: true, stage: beta},
	"DRAResourceClaimDeviceStatus":                         {on: true, stage: beta},
	"DRASchedulerFilterTimeout":                            {on: true, stage: beta},
	"DeclarativeValidation":                                {on: true, stage: beta},
	"DeclarativeValidationTakeover":                        {stage: beta},
	"DeploymentReplicaSetTerminatingReplicas":              {on: true, stage: beta},
	"DetectCacheInconsistency":                             {on: true, stage: beta},
	"DisableAllocatorDualWrite":                            {on: true, locked: true, stage: ga},
	"DisableCPUQuotaWithExclusiveCPUs":                     {on: true, stage: beta},
	"DisableNodeKubeProxyVersion":                          {on: true, stage: deprecated},
	"DynamicResourceAllocation":                            {on: true, locked: true, stage: ga},
	"EnvFiles":                                             {on: true, stage: beta},
	"EventedPLEG":                                          {stage: alpha},
	"ExecProbeTimeout":                                     {on: true, locked: true, stage: ga},
	"ExternalServiceAccountTokenSigner":                    {on: true, stage: beta},
	"GangScheduling":                                       {stage: alpha},
	"GenericWorkload":                                      {stage: alpha},
	"GitRepoVolumeDriver":                                  {stage: deprecated},
	"GracefulNodeShutdown":                                 {on: true, stage: beta},
	"GracefulNodeShutdownBasedOnPodPriority":               {on: true, stage: beta},
	"HPAConfigurableTolerance":                             {on: true, stage: beta},
	"HPAScaleToZero":                                       {stage: alpha},
	"HonorPVReclaimPolicy":                                 {on: true, locked: true, stage: ga},
	"HostnameOverride":                                     {on: true, stage: beta},
	"ImageMaximumGCAge":                                    {on: true, locked: true, stage: ga},
	"ImageVolume":                                          {on: true, stage: beta},
	"InOrderInformers":                                     {on: true, stage: beta},
	"InOrderInformersBatchProcess":                         {on: true, stage: beta},
	"InPlacePodLevelResourcesVerticalScaling":              {stage: alpha},
	"InPlacePodVerticalScaling":                            {on: true, locked: true, stage: ga},
	"InPlacePodVerticalScalingAllocatedStatus":             {stage: deprecated},
	"InPlacePodVerticalScalingExclusiveCPUs":               {stage: alpha},
	"InPlacePodVerticalScalingExclusiveMemory":             {stage: alpha},
	"InTreePluginPortworxUnregister":                       {stage: alpha},
	"InformerResourceVersion":                              {on: true, stage: ga},
	"JobBackoffLimitPerIndex":                              {on: true, locked: true, stage: ga},
	"JobManagedBy":                                         {on: true, locked: true, stage: ga},
	"JobPodReplacementPolicy":                              {on: true, locked: true, stage: ga},
	"JobSuccessPolicy":                                     {on: true, locked: true, stage: ga},
	"KMSv1":                                                {stage: deprecated},
	"KubeletCgroupDriverFromCRI":                           {on: true, locked: true, stage: ga},
	"KubeletCrashLoopBackOffMax":                           {on: true, stage: beta},
	"KubeletEnsureSecretPulledImages":                      {on: true, stage: beta},
	"KubeletFineGrainedAuthz":                              {on: true, stage: beta},
	"KubeletInUserNamespace":                               {stage: alpha},
	"KubeletPSI":                                           {on: true, stage: beta},
	"KubeletPodResourcesDynamicResources":                  {on: true, stage: beta},
	"KubeletPodResourcesGet":                               {on: true, stage: beta},
	"KubeletPodResourcesListUseActivePods":                 {on: true, stage: deprecated},
	"KubeletRegistrationGetOnExistsOnly":                   {stage: deprecated},
	"KubeletSeparateDiskGC":                                {on: true, stage: beta},
	"KubeletServiceAccountTokenForCredentialProviders":     {on: true, stage: beta},
	"KubeletTracing":                                       {on: true, locked: true, stage: ga},
	"ListFromCacheSnapshot":                                {on: true, stage: beta},
	"LocalStorageCapacityIsolationFSQuotaMonitoring":       {stage: beta},
	"LogarithmicScaleDown":                                 {on: true, locked: true, stage: ga},
	"LoggingAlphaOptions":                                  {stage: alpha},
	"LoggingBetaOptions":                                   {on: true, stage: beta},
	"MatchLabelKeysInPodAffinity":                          {on: true, locked: true, stage: ga},
	"MatchLabelKeysInPodTopologySpread":                    {on: true, stage: beta},
	"MatchLabelKeysInPodTopologySpreadSelectorMerge":       {on: true, stage: beta},
	"MaxUnavailableStatefulSet":                            {stage: beta},
	"MemoryManager":                                        {on: true, locked: true, stage: ga},
	"MemoryQoS":                                            {stage: alpha},
	"MultiCIDRServiceAllocator":                            {on: true, locked: true, stage: ga},
	"MutableCSINodeAllocatableCount":                       {on: true, stage: beta},
	"MutablePVNodeAffinity":                                {stage: alpha},
	"MutablePodResourcesForSuspendedJobs":                  {stage: alpha},
	"MutableSchedulingDirectivesForSuspendedJobs":          {stage: alpha},
	"MutatingAdmissionPolicy":                              {stage: beta},
	"NFTablesProxyMode":                                    {on: true, locked: true, stage: ga},
	"NodeDeclaredFeatures":                                 {stage: alpha},
	"NodeInclusionPolicyInPodTopologySpread":               {on: true, locked: true, stage: ga},
	"NodeLogQuery":                                         {stage: beta},
	"NodeSwap":                                             {on: true, locked: true, stage: ga},
	"NominatedNodeNameForExpectation":                      {on: true, stage: beta},
	"OpenAPIEnums":                                         {on: true, stage: beta},
	"OpportunisticBatching":                                {on: true, stage: beta},
	"OrderedNamespaceDeletion":                             {on: true, locked: true, stage: ga},
	"PodAndContainerStatsFromCRI":                          {stage: alpha},
	"PodCertificateRequest":                                {stage: beta},
	"PodDeletionCost":                                      {on: true, stage: beta},
	"PodLevelResources":                                    {on: true, stage: beta},
	"PodLifecycleSleepAction":                              {on: true, locked: true, stage: ga},
	"PodLifecycleSleepActionAllowZero":                     {on: true, locked: true, stage: ga},
	"PodLogsQuerySplitStreams":                             {stage: alpha},
	"PodObservedGenerationTracking":                        {on: true, locked: true, stage: ga},
	"PodReadyToStartContainersCondition":                   {on: true, stage: beta},
	"PodSchedulingReadiness":                               {on: true, locked: true, stage: ga},
	"PodTopologyLabelsAdmission":                           {on: true, stage: beta},
	"PortForwardWebsockets":                                {on: true, stage: beta},
	"PreferSameTrafficDistribution":                        {on: true, locked: true, stage: ga},
	"PreventStaticPodAPIReferences":                        {on: true, stage: beta},
	"ProcMountType":                                        {on: true, stage: beta},
	"QOSReserved":                                          {stage: alpha},
	"RecoverVolumeExpansionFailure":                        {on: true, locked: true, stage: ga},
	"RecursiveReadOnlyMounts":                              {on: true, locked: true, stage: ga},
	"ReduceDefaultCrashLoopBackOffDecay":                   {stage: alpha},
	"RelaxedDNSSearchValidation":                           {on: true, locked: true, stage: ga},
	"RelaxedEnvironmentVariableValidation":                 {on: true, locked: true, stage: ga},
	"RelaxedServiceNameValidation":                         {stage: alpha},
	"ReloadKubeletServerCertificateFile":                   {on: true, stage: beta},
	"RemoteRequestHeaderUID":                               {on: true, stage: beta},
	"ResilientWatchCacheInitialization":                    {on: true, locked: true, stage: ga},
	"ResourceHealthStatus":                                 {stage: alpha},
	"RestartAllContainersOnContainerExits":                 {stage: alpha},
	"RetryGenerateName":                                    {on: true, locked: true, stage: ga},
	"RotateKubeletServerCertificate":                       {on: true, stage: beta},
	"RuntimeClassInImageCriApi":                            {stage: alpha},
	"SELinuxChangePolicy":                                  {on: true, stage: beta},
	"SELinuxMount":                                         {stage: beta},
	"SELinuxMountReadWriteOncePod":                         {on: true, stage: beta},
	"SchedulerAsyncAPICalls":                               {stage: beta},
	"SchedulerAsyncPreemption":                             {on: true, stage: beta},
	"SchedulerPopFromBackoffQ":                             {on: true, stage: beta},
	"SchedulerQueueingHints":                               {on: true, locked: true, stage: ga},
	"SeparateCacheWatchRPC":                                {stage: deprecated},
	"SeparateTaintEvictionController":                      {on: true, locked: true, stage: ga},
	"ServiceAccountNodeAudienceRestriction":                {on: true, stage: beta},
	"ServiceAccountTokenJTI":                               {on: true, locked: true, stage: ga},
	"ServiceAccountTokenNodeBinding":                       {on: true, locked: true, stage: ga},
	"ServiceAccountTokenNodeBindingValidation":             {on: true, locked: true, stage: ga},
	"ServiceAccountTokenPodNodeInfo":                       {on: true, locked: true, stage: ga},
	"ServiceTrafficDistribution":                           {on: true, locked: true, stage: ga},
	"SidecarContainers":                                    {on: true, locked: true, stage: ga},
	"SizeBasedListCostEstimate":                            {on: true, stage: beta},
	"StatefulSetSemanticRevisionComparison":                {on: true, stage: beta},
	"StorageCapacityScoring":                               {stage: alpha},
	"StorageNamespaceIndex":                                {on: true, stage: deprecated},
	"StorageVersionAPI":                                    {stage: alpha},
	"StorageVersionHash":                                   {on: true, stage: beta},
	"StorageVersionMigrator":                               {stage: beta},
	"StreamingCollectionEncodingToJSON":                    {on: true, locked: true, stage: ga},
	"StreamingCollectionEncodingToProtobuf":                {on: true, locked: true, stage: ga},
	"StrictIPCIDRValidation":                               {stage: alpha},
	"StructuredAuthenticationConfiguration":                {on: true, locked: true, stage: ga},
	"StructuredAuthenticationConfigurationEgressSelector":  {on: true, stage: beta},
	"StructuredAuthenticationConfigurationJWKSMetrics":     {on: true, stage: beta},
	"StructuredAuthorizationConfiguration":                 {on: true, locked: true, stage: ga},
	"SupplementalGroupsPolicy":                             {on: true, locked: true, stage: ga},
	"SystemdWatchdog":                                      {on: true, locked: true, stage: ga},
	"TaintTolerationComparisonOperators":                   {stage: alpha},
	"TokenRequestServiceAccountUIDValidation":              {on: true, stage: beta},
	"TopologyAwareHints":                                   {on: true, locked: true, stage: ga},
	"TopologyManagerPolicyAlphaOptions":                    {stage: alpha},
	"TopologyManagerPolicyBetaOptions":                     {on: true, stage: beta},
	"TopologyManagerPolicyOptions":                         {on: true, stage: ga},
	"TranslateStreamCloseWebsocketRequests":                {on: true, stage: beta},
	"UnauthenticatedHTTP2DOSMitigation":                    {on: true, stage: beta},
	"UnknownVersionInteroperabilityProxy":                  {stage: alpha},
	"UserNamespacesHostNetworkSupport":                     {stage: alpha},
	"UserNamespacesSupport":                                {on: true, stage: beta},
	"VolumeAttributesClass":                                {on: true, stage: ga},
	"VolumeLimitScaling":                                   {stage: alpha},
	"WatchCacheInitializationPostStartHook":                {stage: beta},
	"WatchFromStorageWithoutResourceVersion":               {locked: true, stage: deprecated},
	"WatchList":                                            {on: true, stage: beta},
	"WatchListClient":                                      {on: true, stage: beta},
	"WinDSR":                                               {on: true, locked: true, stage: ga},
	"WinOverlay":                                           {on: true, locked: true, stage: ga},
	"WindowsCPUAndMemoryAffinity":                          {stage: alpha},
	"WindowsGracefulNodeShutdown":                          {on: true, stage: beta},
	"WindowsHostNetwork":                                   {stage: deprecated},
}
