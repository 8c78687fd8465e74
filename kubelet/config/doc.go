// Package config is the simulated kubelet's configuration: one Config type, made from the
// upstream kubelet.config.k8s.io/v1beta1 KubeletConfiguration by one path that every entry point
// takes (`run --config` and its flags, a scenario's settings):
//
//	YAML or JSON ──Decode──▶ V1beta1 ──SetDefaults──▶ (flags laid over it) ──FromV1beta1──▶ Config
//	               strict, then lenient                                        validate, convert
//
// It mirrors, for the fields minikubelet models:
//
//   - pkg/kubelet/apis/config: the internal KubeletConfiguration the kubelet runs on (Config);
//   - pkg/kubelet/apis/config/v1beta1: SetDefaults_KubeletConfiguration (SetDefaults);
//   - pkg/kubelet/apis/config/validation: ValidateKubeletConfiguration (Config.Validate);
//   - pkg/kubelet/kubeletconfig/util/codec: DecodeKubeletConfiguration, strict first and lenient
//     when only strictness failed (Decode);
//   - cmd/kubelet/app: loadConfigFile and kubeletConfigFlagPrecedence, the order in which the
//     file, the defaults and the command-line flags are combined (flags win, after defaulting);
//   - k8s.io/component-base/featuregate: the names, locks and AllAlpha/AllBeta of the v1.35
//     kubelet's feature gates (FeatureGates).
//
// Every KubeletConfiguration key is accepted. The ones minikubelet models are honoured with the
// kubelet's defaults and validation; the others are decoded and ignored, unchecked, except
// featureGates, whose names are checked against the v1.35 kubelet's gates whether minikubelet
// models them or not. One key is minikubelet's own: capacity, the simulated machine's size, which
// a real kubelet measures. The same document is accepted or refused with the same error text
// wherever it comes from; only what a caller does with a strict decoding error differs (`run`
// warns and goes on as the kubelet does, a scenario refuses it).
//
// Config is what the kubelet's constructor takes whole; every value in it is explicit. The
// components it configures still read a zero as their own default, for callers that build them
// without a Config.
package config
