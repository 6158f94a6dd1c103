// SPDX-License-Identifier: Apache-2.0 (Cairn: see LICENSE and NOTICE at the top of the checkout)
// The theme's htmx (unfold) within the Content-Security-Policy: no <style> of its own for
// indicators, no eval of attribute code, no script tags from responses.
htmx.config.includeIndicatorStyles = false;
htmx.config.allowEval = false;
htmx.config.allowScriptTags = false;
