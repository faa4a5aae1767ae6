// Twinlog mirror dashboard: polls /api/v1/mirrors and /api/v1/background-tasks and redraws; lag history is kept in this page only.
// No build step and no library: plain DOM and a small SVG line chart.
'use strict';

const POLL_MS = 2000;
const HISTORY_POINTS = 180; // 6 minutes at POLL_MS
const COLORS = ['#2b6cb0', '#c05621', '#2f855a', '#9b2c2c', '#6b46c1', '#b7791f', '#2c7a7b', '#97266d'];
const history = new Map(); // "mirror/topic/partition" -> [{t, records, seconds}]
const openDetails = new Set();
let lastDocument = null;
let lastTasks = null;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k.startsWith('on')) node.addEventListener(k.substring(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  return node;
}

function badge(state) {
  return el('span', {class: 'badge state-' + state, text: state});
}

function formatNumber(v) {
  if (v === null || v === undefined) return '—';
  if (Math.abs(v) >= 1e6) return (v / 1e6).toFixed(1) + 'M';
  if (Math.abs(v) >= 1e4) return (v / 1e3).toFixed(1) + 'k';
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) < 10 ? String(Number(v.toFixed(2))) : v.toFixed(1);
}

function age(ms) {
  if (ms < 0) return 'never';
  const s = Math.round(ms / 1000);
  return s < 120 ? s + ' s ago' : Math.round(s / 60) + ' min ago';
}

function record(doc) {
  for (const m of doc.mirrors) {
    for (const t of m.topics) {
      for (const p of t.partitions) {
        const key = m.name + '/' + t.name + '/' + p.partition;
        let points = history.get(key);
        if (!points) history.set(key, points = []);
        points.push({t: doc.timeMs, records: Math.max(0, p.lagRecords), seconds: p.lagSeconds});
        if (points.length > HISTORY_POINTS) points.splice(0, points.length - HISTORY_POINTS);
      }
    }
  }
}

// A line chart: one polyline per series, y from 0 to a rounded maximum, x over the kept history.
function chart(title, metric, series, nowMs) {
  const width = 420, height = 150, left = 46, right = 8, top = 8, bottom = 20;
  const box = el('div', {class: 'chart-box'});
  box.append(el('div', {class: 'chart-title', text: title}));
  const s = svg('svg', {class: 'chart', width, height, 'data-metric': metric});
  let max = 0;
  for (const line of series) for (const p of line.points) if (p.v !== null) max = Math.max(max, p.v);
  const magnitude = Math.pow(10, Math.floor(Math.log10(Math.max(max, 1))));
  const yMax = Math.max(1, Math.ceil(max / magnitude) * magnitude);
  // the kept history, at least a minute wide: a new page does not crowd its first points at the right edge
  let oldest = nowMs;
  for (const line of series) for (const p of line.points) oldest = Math.min(oldest, p.t);
  const span = Math.max(60000, nowMs - oldest);
  const x = t => left + (width - left - right) * (1 - Math.min(span, nowMs - t) / span);
  const y = v => top + (height - top - bottom) * (1 - v / yMax);
  for (let i = 0; i <= 4; i++) {
    const v = yMax * i / 4;
    s.append(svg('line', {class: 'grid', x1: left, x2: width - right, y1: y(v), y2: y(v)}));
    const label = svg('text', {x: left - 4, y: y(v) + 3, 'text-anchor': 'end'});
    label.textContent = formatNumber(v);
    s.append(label);
  }
  s.append(svg('line', {class: 'axis', x1: left, x2: left, y1: top, y2: height - bottom}));
  s.append(svg('line', {class: 'axis', x1: left, x2: width - right, y1: height - bottom, y2: height - bottom}));
  const spanLabel = span >= 120000 ? '-' + Math.round(span / 60000) + ' min' : '-' + Math.round(span / 1000) + ' s';
  for (const [text, anchor, at] of [[spanLabel, 'start', left], ['now', 'end', width - right]]) {
    const label = svg('text', {x: at, y: height - 6, 'text-anchor': anchor});
    label.textContent = text;
    s.append(label);
  }
  series.forEach((line, i) => {
    const known = line.points.filter(p => p.v !== null);
    s.append(svg('polyline', {
      stroke: COLORS[i % COLORS.length], 'data-series': line.label,
      'data-values': known.map(p => p.v).join(','),
      points: known.map(p => x(p.t).toFixed(1) + ',' + y(p.v).toFixed(1)).join(' ')
    }));
  });
  box.append(s);
  const legend = el('div', {class: 'legend'});
  series.forEach((line, i) => legend.append(el('span', {},
      el('i', {style: 'background:' + COLORS[i % COLORS.length]}), line.label)));
  box.append(legend);
  return box;
}

function commandBlock(title, key, commands) {
  const details = el('details', {'data-key': key, open: openDetails.has(key)});
  details.addEventListener('toggle', () => details.open ? openDetails.add(key) : openDetails.delete(key));
  details.append(el('summary', {text: title}));
  for (const c of commands) details.append(el('pre', {class: 'cmd', text: c}));
  return details;
}

function actionButtons(doc, mirror, topic) {
  if (!doc.actionsEnabled) return null;
  const box = el('div', {class: 'actions'});
  const specs = [
    ['failover', 'Fail over', 'danger',
      'Fail over topic "' + topic + '" of mirror "' + mirror + '"?\n\nIt stops mirroring for good and becomes ' +
      'writable on this cluster. Producers and consumers should move here. Failing back later means mirroring it ' +
      'back to the source (see the failback commands).'],
    ['pause', 'Pause', '', 'Pause mirroring of topic "' + topic + '" (mirror "' + mirror + '")? The lag grows ' +
      'until it is resumed.'],
    ['resume', 'Resume', '', 'Resume mirroring of topic "' + topic + '" (mirror "' + mirror + '")?']
  ];
  for (const [action, label, cls, question] of specs) {
    box.append(el('button', {
      class: cls, 'data-action': action, 'data-mirror': mirror, 'data-topic': topic, text: label,
      onclick: () => { if (window.confirm(question)) act(mirror, topic, action); }
    }));
  }
  return box;
}

function showResult(text, isError) {
  const box = document.getElementById('action-result');
  box.textContent = text;
  box.className = 'action-result' + (isError ? ' error' : '');
  box.hidden = false;
}

async function act(mirror, topic, action) {
  const url = 'api/v1/mirrors/' + encodeURIComponent(mirror) + '/topics/' + encodeURIComponent(topic) + '/' + action;
  showResult(action + ' of ' + topic + '…', false);
  try {
    const response = await fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{}'});
    const body = await response.json();
    if (response.ok) showResult(action + ' of ' + topic + ' on mirror ' + mirror + ': ' + body.result, false);
    else showResult(action + ' of ' + topic + ' refused (' + response.status + '): ' + body.error, true);
  } catch (e) {
    showResult(action + ' of ' + topic + ' failed: ' + e.message, true);
  }
  poll(false);
}

function partitionRow(doc, m, t, p) {
  let secondsCell = formatNumber(p.lagSeconds);
  if (p.lagSeconds === null && p.leader >= 0 && p.leader !== doc.cluster.brokerId) {
    secondsCell = 'on broker ' + p.leader;
  }
  const failed = p.state === 'FAILED';
  return el('tr', {class: failed ? 'failed' : null, 'data-mirror': m.name, 'data-topic': t.name,
      'data-partition': p.partition, 'data-state': p.state},
    el('td', {class: 'num', text: p.partition}),
    el('td', {}, badge(p.state)),
    el('td', {class: 'num', text: p.leader >= 0 ? p.leader : 'none'}),
    el('td', {class: 'num', text: p.sourceLogEndOffset}),
    el('td', {class: 'num', text: p.destinationLogEndOffset}),
    el('td', {class: 'num lag-records', text: formatNumber(p.lagRecords)}),
    el('td', {class: 'num lag-seconds', text: secondsCell}),
    el('td', {class: 'num rpo-seconds', title: p.mirroredUpToMs >= 0 ? 'mirrored up to ' +
        new Date(p.mirroredUpToMs).toISOString() + (p.newestMirroredTimestampMs >= 0 ? '; newest record ' +
        new Date(p.newestMirroredTimestampMs).toISOString() : '') : 'not known',
        text: formatNumber(p.rpoSeconds)}),
    el('td', {class: 'num', text: p.lastMirroredOffset >= 0 ? p.lastMirroredOffset + ' (epoch ' + p.lastMirroredEpoch + ')' : '—'}),
    el('td', {}, p.lastError ? el('span', {class: 'reason', text: p.lastError +
        (p.retryAttempt > 0 ? ' (retry ' + p.retryAttempt + ')' : p.retryAttempt < 0 ? ' (not retried: act)' : '')}) : '',
      p.outOfSyncReplicas.length ? el('div', {class: 'muted', text: 'out of sync: ' + p.outOfSyncReplicas.join(', ')}) : null));
}

function topicSection(doc, m, t) {
  const section = el('div', {class: 'topic', 'data-topic': t.name});
  section.append(el('h3', {}, 'Topic ' + t.name + ' ', badge(t.desiredState)));
  const buttons = actionButtons(doc, m.name, t.name);
  if (buttons) section.append(buttons);
  const table = el('table', {class: 'partitions'});
  table.append(el('thead', {}, el('tr', {}, ...['partition', 'state', 'leader', 'source end', 'destination end',
      'lag (records)', 'lag (s)', 'RPO (s)', 'last mirrored', 'reason'].map(h => el('th', {text: h})))));
  const body = el('tbody');
  for (const p of t.partitions) body.append(partitionRow(doc, m, t, p));
  table.append(body);
  section.append(table);
  const recordsSeries = [], secondsSeries = [];
  let anySeconds = false;
  for (const p of t.partitions) {
    const points = history.get(m.name + '/' + t.name + '/' + p.partition) || [];
    recordsSeries.push({label: 'p' + p.partition, points: points.map(h => ({t: h.t, v: h.records}))});
    secondsSeries.push({label: 'p' + p.partition, points: points.map(h => ({t: h.t, v: h.seconds}))});
    anySeconds = anySeconds || points.some(h => h.seconds !== null);
  }
  const charts = el('div', {class: 'charts', 'data-mirror': m.name, 'data-topic': t.name});
  charts.append(chart('Lag in records, per partition', 'records', recordsSeries, doc.timeMs));
  if (anySeconds) charts.append(chart('Lag in seconds (RPO of a failover now)', 'seconds', secondsSeries, doc.timeMs));
  else charts.append(el('div', {class: 'muted', text: 'Lag in seconds: published by the partitions\' leaders ' +
      '(this broker leads none of them).'}));
  section.append(charts);
  section.append(commandBlock('Fail over ' + t.name, 'fo/' + m.name + '/' + t.name, [t.commands.failover]));
  section.append(commandBlock('Fail back ' + t.name + ' (after a failover, once the source is back)',
      'fb/' + m.name + '/' + t.name, t.commands.failback));
  section.append(commandBlock('Pause / resume ' + t.name, 'pr/' + m.name + '/' + t.name,
      [t.commands.pause, t.commands.resume]));
  return section;
}

function mirrorSection(doc, m) {
  const section = el('section', {class: 'mirror', 'data-mirror': m.name});
  section.append(el('h2', {}, 'Mirror ' + m.name + ' ', badge(m.state)));
  if (m.stateReason) section.append(el('div', {class: 'reason', text: m.stateReason}));
  const states = Object.entries(m.summary.partitionStates).map(([s, n]) => n + ' ' + s).join(', ') || 'no partitions';
  section.append(el('div', {class: 'muted', text: 'Source ' + m.sourceBootstrap + ' (cluster ' +
      (m.sourceClusterId || 'not contacted yet') + ') · ' + m.topics.length + ' topics · ' + states +
      ' · total lag ' + m.summary.lagRecords + ' records' + (m.summary.maxRpoSeconds === null ? '' :
      ' · RPO ' + formatNumber(m.summary.maxRpoSeconds) + ' s (mirrored up to ' +
      new Date(m.summary.oldestMirroredUpToMs).toISOString() + ')')}));
  section.append(commandBlock('Fail over every topic of ' + m.name, 'fo/' + m.name, [m.commands.failover]));
  for (const t of m.topics) section.append(topicSection(doc, m, t));
  section.append(el('h3', {text: 'Group offset sync (every ' + Math.round(m.groupsSyncIntervalMs / 1000) + ' s)'}));
  if (m.groups.length === 0) {
    section.append(el('div', {class: 'muted', text: 'No group synced yet.'}));
  } else {
    const table = el('table', {class: 'groups'});
    table.append(el('thead', {}, el('tr', {}, ...['group', 'type', 'status', 'last sync', 'offsets synced', 'clamped']
        .map(h => el('th', {text: h})))));
    const body = el('tbody');
    for (const g of m.groups) {
      body.append(el('tr', {'data-group': g.groupId},
          el('td', {text: g.groupId}), el('td', {text: g.groupType}), el('td', {}, badge(g.status)),
          el('td', {text: g.lastSyncTimeMs > 0 ? age(doc.timeMs - g.lastSyncTimeMs) : 'never'}),
          el('td', {class: 'num', text: g.offsetsSynced}), el('td', {class: 'num', text: g.offsetsClamped})));
    }
    table.append(body);
    section.append(table);
  }
  return section;
}

function render(doc) {
  const c = doc.cluster;
  document.getElementById('cluster').textContent = 'cluster ' + c.clusterId + ' · broker ' + c.brokerId +
      ' · controller ' + c.controllerId + ' · bootstrap ' + c.bootstrapServers +
      (doc.actionsEnabled ? ' · actions enabled' : ' · read-only');
  const brokers = document.querySelector('#brokers tbody');
  brokers.replaceChildren(...c.brokers.map(b => el('tr', {'data-broker': b.id},
      el('td', {class: 'num', text: b.id}), el('td', {text: b.address}), el('td', {text: b.rack || '—'}),
      el('td', {text: [b.id === c.controllerId ? 'controller' : '', b.id === c.brokerId ? 'this dashboard' : '']
          .filter(x => x).join(', ')}))));
  const failed = [];
  for (const m of doc.mirrors) for (const t of m.topics) for (const p of t.partitions) {
    if (p.state === 'FAILED') failed.push(el('li', {'data-mirror': m.name, 'data-topic': t.name, 'data-partition': p.partition},
        'mirror ' + m.name + ', ' + t.name + '-' + p.partition + ': ', el('span', {class: 'reason', text: p.lastError || 'no reason recorded'})));
  }
  document.getElementById('failed-list').replaceChildren(...failed);
  document.getElementById('failed-summary').hidden = failed.length === 0;
  document.getElementById('mirrors').replaceChildren(...doc.mirrors.map(m => mirrorSection(doc, m)));
  document.getElementById('no-mirrors').hidden = doc.mirrors.length > 0;
}

function seconds(ms) {
  return ms < 1000 ? ms + ' ms' : formatNumber(ms / 1000) + ' s';
}

// This broker's periodic tasks: a warning list for those FAILING or STALE, and a table of all.
function renderTasks(doc) {
  const attention = [];
  const rows = [];
  for (const t of doc.tasks) {
    const last = t.succeeded ? age(t.lastSuccessAgeMs) : 'never (for ' + seconds(t.lastSuccessAgeMs) + ')';
    rows.push(el('tr', {'data-task': t.name, class: t.status === 'OK' ? null : 'failed'},
        el('td', {text: t.name}), el('td', {}, badge(t.status)), el('td', {class: 'num', text: seconds(t.periodMs)}),
        el('td', {text: last}), el('td', {class: 'num', text: t.consecutiveFailures}),
        el('td', {class: 'num', text: t.failures}), el('td', {class: 'reason', text: t.lastError || ''})));
    if (t.status === 'FAILING') {
      attention.push(el('li', {'data-task': t.name}, t.name + ': failed ' + t.consecutiveFailures +
          ' times in a row, last success ' + last + ': ', el('span', {class: 'reason', text: t.lastError})));
    } else if (t.status === 'STALE') {
      attention.push(el('li', {'data-task': t.name}, t.name + ': no success for ' + seconds(t.lastSuccessAgeMs) +
          ' (it runs every ' + seconds(t.periodMs) + '): hung in a run, or no longer scheduled'));
    }
  }
  document.querySelector('#tasks tbody').replaceChildren(...rows);
  document.getElementById('tasks-attention-list').replaceChildren(...attention);
  document.getElementById('tasks-attention').hidden = attention.length === 0;
}

async function pollTasks() {
  try {
    const response = await fetch('api/v1/background-tasks', {cache: 'no-store'});
    if (response.ok) {
      lastTasks = await response.json();
      renderTasks(lastTasks);
    }
  } catch (e) {
    // the mirrors poll reports an unreachable broker
  }
}

function setStatus(text, ok) {
  const status = document.getElementById('status');
  status.textContent = text;
  status.className = 'status ' + (ok ? 'ok' : 'error');
}

let timer = null;
async function poll(schedule = true) {
  await pollTasks();
  try {
    const response = await fetch('api/v1/mirrors', {cache: 'no-store'});
    const doc = await response.json();
    if (!response.ok) {
      setStatus('cannot read the mirrors (' + response.status + '): ' + doc.error, false);
    } else {
      lastDocument = doc;
      record(doc);
      render(doc);
      setStatus('updated ' + new Date(doc.timeMs).toLocaleTimeString(), true);
    }
  } catch (e) {
    setStatus('broker unreachable: ' + e.message, false);
  }
  if (schedule) {
    clearTimeout(timer);
    timer = setTimeout(poll, POLL_MS);
  }
}

// For scripts and tests: the last document and the kept lag history.
window.twinlogDashboard = {
  lastDocument: () => lastDocument,
  lastTasks: () => lastTasks,
  history: key => (history.get(key) || []).slice()
};
document.getElementById('poll-seconds').textContent = String(POLL_MS / 1000);
poll();
