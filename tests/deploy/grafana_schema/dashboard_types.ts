// The types that check.sh assigns each dashboard's JSON to: @grafana/schema's Dashboard as JSON
// spells it, with each panel, annotation and query checked against the most specific type the
// package publishes. Every deviation from the plain Dashboard type is listed here, and each one
// only narrows it or admits fields Grafana itself reads (with where it reads them).
import type {
  AnnotationQuery,
  Dashboard,
  DataQuery,
  FieldConfig,
  FieldConfigSource,
  Panel,
  RowPanel,
  VariableModel,
} from "@grafana/schema";
import type * as barchart from "@grafana/schema/dist/esm/raw/composable/barchart/panelcfg/x/BarChartPanelCfg_types.gen";
import type * as bargauge from "@grafana/schema/dist/esm/raw/composable/bargauge/panelcfg/x/BarGaugePanelCfg_types.gen";
import type * as gauge from "@grafana/schema/dist/esm/raw/composable/gauge/panelcfg/x/GaugePanelCfg_types.gen";
import type * as heatmap from "@grafana/schema/dist/esm/raw/composable/heatmap/panelcfg/x/HeatmapPanelCfg_types.gen";
import type * as histogram from "@grafana/schema/dist/esm/raw/composable/histogram/panelcfg/x/HistogramPanelCfg_types.gen";
import type * as piechart from "@grafana/schema/dist/esm/raw/composable/piechart/panelcfg/x/PieChartPanelCfg_types.gen";
import type * as stat from "@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen";
import type * as statetimeline from "@grafana/schema/dist/esm/raw/composable/statetimeline/panelcfg/x/StateTimelinePanelCfg_types.gen";
import type * as statushistory from "@grafana/schema/dist/esm/raw/composable/statushistory/panelcfg/x/StatusHistoryPanelCfg_types.gen";
import type * as table from "@grafana/schema/dist/esm/raw/composable/table/panelcfg/x/TablePanelCfg_types.gen";
import type * as text from "@grafana/schema/dist/esm/raw/composable/text/panelcfg/x/TextPanelCfg_types.gen";
import type * as timeseries from "@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen";

// JSON cannot name a TypeScript string enum member, only its value: "palette-classic" for
// FieldColorModeId.PaletteClassic. Json<T> is T with every string enum replaced by the union of
// its values (numeric enums stay: a JSON number is checked against their members). Nothing else
// changes: required stays required, closed object types stay closed.
export type Json<T> = T extends string
  ? `${T}`
  : T extends number | boolean | null | undefined
    ? T
    : T extends ReadonlyArray<infer Element>
      ? Array<Json<Element>>
      : T extends object
        ? { [Key in keyof T]: Json<T[Key]> }
        : T;

// Panel options and custom field config as saved: Grafana fills in a plugin's defaults for
// whatever a dashboard leaves out, so every field may be missing; unknown fields and wrong
// types are still errors.
export type JsonPartial<T> = T extends string
  ? `${T}`
  : T extends number | boolean | null | undefined
    ? T
    : T extends ReadonlyArray<infer Element>
      ? Array<JsonPartial<Element>>
      : T extends object
        ? { [Key in keyof T]?: JsonPartial<T[Key]> }
        : T;

// A query (panel target, annotation target). Its fields beyond DataQuery's (refId, hide,
// datasource, queryType) belong to the data source plugin, which @grafana/schema does not
// model; the Dashboard type itself has Record<string, unknown> for targets.
export type QueryJson = Json<DataQuery> & { [datasourceField: string]: unknown };

// Field config of a panel whose plugin has custom field config type Custom. Override property
// ids are the standard FieldConfig fields or "custom.<a field of Custom>".
export type FieldConfigSourceJson<Custom> = {
  defaults: Omit<Json<FieldConfig>, "custom"> & { custom?: JsonPartial<Custom> };
  overrides: Array<
    Omit<Json<FieldConfigSource["overrides"][number]>, "properties"> & {
      properties: Array<{
        id: (keyof FieldConfig & string) | `custom.${keyof Custom & string}`;
        value?: unknown;
      }>;
    }
  >;
};

// A panel of a plugin with options type Options and custom field config type Custom.
export type PanelJson<Options, Custom> = Omit<Json<Panel>, "options" | "fieldConfig" | "targets"> & {
  options?: JsonPartial<Options>;
  fieldConfig?: FieldConfigSourceJson<Custom>;
  targets?: QueryJson[];
};

// Plugins without custom field config: any field under fieldConfig.defaults.custom is an error.
type NoCustom = Record<string, never>;

// The core panel plugins whose types @grafana/schema publishes, by plugin id.
export interface PanelTypes {
  barchart: PanelJson<barchart.Options, barchart.FieldConfig>;
  bargauge: PanelJson<bargauge.Options, NoCustom>;
  gauge: PanelJson<gauge.Options, NoCustom>;
  heatmap: PanelJson<heatmap.Options, heatmap.FieldConfig>;
  histogram: PanelJson<histogram.Options, histogram.FieldConfig>;
  piechart: PanelJson<piechart.Options, piechart.FieldConfig>;
  stat: PanelJson<stat.Options, NoCustom>;
  "state-timeline": PanelJson<statetimeline.Options, statetimeline.FieldConfig>;
  "status-history": PanelJson<statushistory.Options, statushistory.FieldConfig>;
  table: PanelJson<table.Options, table.FieldConfig>;
  text: PanelJson<text.Options, NoCustom>;
  timeseries: PanelJson<timeseries.Options, timeseries.FieldConfig>;
  // A row holds the panels of a collapsed row: the generated code checks each of them as a
  // panel of its own type and puts it here.
  row: Json<Omit<RowPanel, "panels">> & { panels: Array<PanelTypes[keyof PanelTypes] | OtherPanel> };
}

// Any other plugin: only what the Dashboard type says about every panel.
export type OtherPanel = PanelJson<Record<string, unknown>, Record<string, unknown>>;

export type PanelOf<Type extends string> = Type extends keyof PanelTypes ? PanelTypes[Type] : OtherPanel;

// Fields of a Prometheus annotation that Grafana's Prometheus data source reads from the
// annotation itself, outside the Dashboard type (packages/grafana-prometheus/src/annotations.ts
// in Grafana 11+, public/app/plugins/datasource/prometheus in Grafana 10): titleFormat,
// textFormat, tagKeys and useValueForTime in processEvents; expr and step are the query and
// its minimum step as Grafana 10 stores and reads them, which Grafana 11+ moves into target on
// load (prepareAnnotation).
export interface PrometheusAnnotationFields {
  expr?: string;
  step?: string;
  titleFormat?: string;
  textFormat?: string;
  tagKeys?: string;
  useValueForTime?: boolean;
}

type AnnotationJson = Omit<Json<AnnotationQuery>, "target"> & { target?: QueryJson };

// An annotation whose data source has plugin id Type.
export type AnnotationOf<Type extends string> = Type extends "prometheus"
  ? AnnotationJson & PrometheusAnnotationFields
  : AnnotationJson;

// A template variable of type Type. A query variable may also have "definition", the query as
// the variable list shows it: Grafana writes it for every query variable it saves, and the same
// package's v2 dashboard schema has it (QueryVariableSpec.definition), the v1 VariableModel not.
export type VariableOf<Type extends string> = Type extends "query"
  ? Json<VariableModel> & { definition?: string }
  : Json<VariableModel>;

// The dashboard itself; its panels, annotations and variables are checked one by one as the
// types above, then again as the Dashboard type's own.
export type DashboardJson = Json<Dashboard>;
