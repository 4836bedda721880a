#!/bin/sh
# The Grafana dashboard against Grafana's published schema: the JSON as an
# object literal of @grafana/schema's Dashboard type, compiled by tsc
# --strict (unknown fields, wrong types and missing required ones fail).
#   check_dashboard.sh DASHBOARD.json
# The modules come from `npm install` in this folder (scripts/setup.sh test).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tsc=$here/node_modules/.bin/tsc
if ! command -v node >/dev/null || [ ! -x "$tsc" ] || [ ! -d "$here/node_modules/@grafana/schema" ]; then
	echo "SKIP: no $here/node_modules with @grafana/schema and typescript (npm install there;" \
		"scripts/setup.sh test does it)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
{
	echo "import type { Dashboard } from '@grafana/schema';"
	printf 'export const dashboard: Dashboard = '
	cat "$1"
	echo ';'
} >"$tmp/dashboard.ts"
ln -s "$here/node_modules" "$tmp/node_modules"
cd "$tmp"
"$tsc" --noEmit --strict --skipLibCheck --moduleResolution bundler --module esnext \
	--target es2020 dashboard.ts
echo "$1: a valid Grafana dashboard (@grafana/schema $(node -p "require('$here/node_modules/@grafana/schema/package.json').version"))"
