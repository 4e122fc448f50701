// The types the Grafana dashboards are checked against. check_dashboards.py
// writes gen/<dashboard>.ts, which assigns each dashboard (and each panel's
// options and custom field config) as an object literal to these types, so
// tsc catches wrong types, missing required fields and unknown fields.
import type { Dashboard } from '@grafana/schema';
import type * as stat from '@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen';
import type * as statetimeline from '@grafana/schema/dist/esm/raw/composable/statetimeline/panelcfg/x/StateTimelinePanelCfg_types.gen';
import type * as table from '@grafana/schema/dist/esm/raw/composable/table/panelcfg/x/TablePanelCfg_types.gen';
import type * as timeseries from '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';

export type { Dashboard };

// JSON spells enums by value: a string enum becomes the union of its values
// (`${E}`), a numeric enum any number. Everything else keeps its shape.
export type Loose<T> = T extends string
  ? `${T}`
  : T extends number
    ? number
    : T extends boolean
      ? boolean
      : T extends Array<infer U>
        ? Array<Loose<U>>
        : T extends object
          ? { [K in keyof T]: Loose<T[K]> }
          : T;

// Panel plugin id -> its options and custom field config.
export interface PanelOptions {
  stat: stat.Options;
  'state-timeline': statetimeline.Options;
  table: table.Options;
  timeseries: timeseries.Options;
}
export interface PanelFieldConfig {
  'state-timeline': statetimeline.FieldConfig;
  table: table.FieldConfig;
  timeseries: timeseries.FieldConfig;
}
