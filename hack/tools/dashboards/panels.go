package main

import (
	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// datasource is the data source of every panel and variable: the
// dashboard's datasource variable, so that one dashboard serves every
// Prometheus a Grafana knows.
var datasource = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}

// query is one PromQL target of a panel.
type query struct {
	expr, legend string
}

func q(expr, legend string) query { return query{expr: expr, legend: legend} }

func targets(instant bool, qs []query) []cog.Builder[variants.Dataquery] {
	var out []cog.Builder[variants.Dataquery]
	for i, x := range qs {
		b := prometheus.NewDataqueryBuilder().
			Datasource(datasource).
			RefId(string(rune('A' + i))).
			Expr(x.expr).
			LegendFormat(x.legend)
		if instant {
			b = b.Instant().Format(prometheus.PromQueryFormatTable)
		} else {
			b = b.Range()
		}
		out = append(out, b)
	}
	return out
}

// graph is a time series panel.
func graph(title, description, unit string, qs ...query) cog.Builder[dashboard.Panel] {
	return timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource).
		Unit(unit).
		Min(0).
		Height(8).
		Span(12).
		Targets(targets(false, qs))
}

// single is a stat panel: the last value of each query.
func single(title, description, unit string, qs ...query) cog.Builder[dashboard.Panel] {
	return stat.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource).
		Unit(unit).
		Height(4).
		Span(6).
		GraphMode(common.BigValueGraphModeNone).
		ColorMode(common.BigValueColorModeValue).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"})).
		Targets(targets(false, qs))
}

// bars is a bar gauge of an instant query, one bar per series.
func bars(title, description, unit string, qs ...query) cog.Builder[dashboard.Panel] {
	return bargauge.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource).
		Unit(unit).
		Height(8).
		Span(12).
		Orientation(common.VizOrientationHorizontal).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"})).
		Targets(targets(true, qs))
}

// list is a table of an instant query, one row per series.
func list(title, description, unit string, qs ...query) cog.Builder[dashboard.Panel] {
	return table.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource).
		Unit(unit).
		Height(8).
		Span(12).
		Targets(targets(true, qs))
}

// variables returns the dashboard's template variables: the data source,
// the cluster (All matches series without a cluster label too, as in a
// Prometheus of one cluster), and, when namespaceQuery is set, the
// namespace.
func variables(clusterQuery, namespaceLabel, namespaceQuery string, namespaceMulti bool) []cog.Builder[dashboard.VariableModel] {
	vs := []cog.Builder[dashboard.VariableModel]{
		dashboard.NewDatasourceVariableBuilder("datasource").
			Label("Data source").
			Type("prometheus"),
		dashboard.NewQueryVariableBuilder("cluster").
			Label("Cluster").
			Datasource(datasource).
			Query(dashboard.StringOrMap{String: cog.ToPtr(clusterQuery)}).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Sort(dashboard.VariableSortAlphabeticalAsc).
			IncludeAll(true).
			AllValue(".*").
			Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: cog.ToPtr("All")}, Value: dashboard.StringOrArrayOfString{String: cog.ToPtr("$__all")}}),
	}
	if namespaceQuery != "" {
		ns := dashboard.NewQueryVariableBuilder("namespace").
			Label(namespaceLabel).
			Datasource(datasource).
			Query(dashboard.StringOrMap{String: cog.ToPtr(namespaceQuery)}).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Sort(dashboard.VariableSortAlphabeticalAsc)
		if namespaceMulti {
			ns = ns.IncludeAll(true).AllValue(".*").
				Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: cog.ToPtr("All")}, Value: dashboard.StringOrArrayOfString{String: cog.ToPtr("$__all")}})
		} else {
			ns = ns.Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: cog.ToPtr(defaultNamespace)}, Value: dashboard.StringOrArrayOfString{String: cog.ToPtr(defaultNamespace)}})
		}
		vs = append(vs, ns)
	}
	return vs
}
