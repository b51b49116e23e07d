package main

import (
	"cmp"
	"flag"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kyma-project/kim-snatch/pkg/check"
)

// clusterFlags select the cluster as kubectl does: --kubeconfig, and
// kubectl's --context, --cluster and --user, bound by client-go's clientcmd
// so that their names, help and meaning are kubectl's own. kubectl's
// --namespace is left out: check's --namespace names the installation,
// which a context's default namespace says nothing about.
type clusterFlags struct {
	Kubeconfig string
	Overrides  clientcmd.ConfigOverrides
}

// bind registers the flags on fs. clientcmd binds to a pflag set; each of
// its flags is a flag.Value too, so it is registered on fs as it is.
func (c *clusterFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&c.Kubeconfig, clientcmd.RecommendedConfigPathFlag, "",
		"Path to a kubeconfig; empty means in-cluster, then $KUBECONFIG and ~/.kube/config.")
	names := clientcmd.RecommendedConfigOverrideFlags("")
	pfs := pflag.NewFlagSet("cluster", pflag.ContinueOnError)
	names.CurrentContext.BindStringFlag(pfs, &c.Overrides.CurrentContext)
	names.ContextOverrideFlags.ClusterName.BindStringFlag(pfs, &c.Overrides.Context.Cluster)
	names.ContextOverrideFlags.AuthInfoName.BindStringFlag(pfs, &c.Overrides.Context.AuthInfo)
	pfs.VisitAll(func(f *pflag.Flag) { fs.Var(f.Value, f.Name, f.Usage+".") })
}

// explicit reports whether a flag names where the cluster is, so that the
// in-cluster configuration does not take precedence.
func (c clusterFlags) explicit() bool {
	return c.Kubeconfig != "" || c.Overrides.CurrentContext != "" ||
		c.Overrides.Context.Cluster != "" || c.Overrides.Context.AuthInfo != ""
}

// inClusterContext names the in-cluster configuration in a report, which
// has no kubeconfig context.
const inClusterContext = "in-cluster"

// load returns the configuration the flags select, and the cluster it
// points at for the report: the in-cluster configuration when no flag
// names one and the process runs in a Pod, else the kubeconfig (the flag's,
// $KUBECONFIG or ~/.kube/config) with kubectl's overrides.
func (c clusterFlags) load() (*rest.Config, check.Cluster, error) {
	if !c.explicit() {
		if cfg, err := rest.InClusterConfig(); err == nil {
			return cfg, check.Cluster{Context: inClusterContext, Server: cfg.Host}, nil
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = c.Kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &c.Overrides)
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, check.Cluster{}, err
	}
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, check.Cluster{}, err
	}
	return cfg, check.Cluster{Context: cmp.Or(c.Overrides.CurrentContext, raw.CurrentContext), Server: cfg.Host}, nil
}
