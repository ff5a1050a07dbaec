// The tidy tables read by a Parquet reader that is not ours (make test-tidy).
//
// usage: node interop/tables/check_parquet.mjs NPM_DIR RESULTS_DIR CSV_DIR DOC
//
// NPM_DIR holds hyparquet and hyparquet-compressors (npm install --prefix
// NPM_DIR; the Makefile's tidy-npm). RESULTS_DIR is an exported tables
// folder (the report's results/ or a study's results/study-<name>/) with
// tidy.parquet and train_curves.parquet; CSV_DIR the same tables as
// `routebench tables --out CSV_DIR RESULTS_DIR` wrote them; DOC is
// docs/interop.md, whose two column tables in its "## Tidy results"
// section state the schemas. For each table, hyparquet's reading must have
// the documented columns in order with their types and nullability (a
// sweep's lead with a required string `point`), and every row must equal
// the CSV's, null for an empty cell. For tidy.parquet also: no metric
// holds a parameter (`@`), no interval is "", the bounds and the interval
// are null together, each level's own columns are set and no other's, the
// parameters sit on their metrics only, and no two rows share their
// coordinates.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const [npmDir, resultsDir, csvDir, docPath] = process.argv.slice(2)
if (!docPath) {
  console.error('usage: node interop/tables/check_parquet.mjs NPM_DIR RESULTS_DIR CSV_DIR DOC')
  process.exit(2)
}
const mod = (pkg, file) => import(pathToFileURL(join(npmDir, 'node_modules', pkg, file)).href)
const { parquetMetadata, parquetReadObjects } = await mod('hyparquet', 'src/index.js')
const { compressors } = await mod('hyparquet-compressors', 'src/index.js')

const failures = []
const check = (ok, what) => { if (!ok) failures.push(what) }

// The documented schemas: per column table, [name, type, nullable].
function documentedSchemas(doc) {
  const start = doc.indexOf('\n## Tidy results')
  if (start < 0) throw new Error(`${docPath} has no "## Tidy results" section`)
  let sec = doc.slice(start + 1)
  const end = sec.indexOf('\n## ', 3)
  if (end >= 0) sec = sec.slice(0, end)
  const tables = []
  let inTable = false
  for (const line of sec.split('\n')) {
    if (line.startsWith('| column | type |')) { inTable = true; tables.push([]); continue }
    if (!line.startsWith('|')) { inTable = false; continue }
    const cells = line.trim().replace(/^\||\|$/g, '').split('|')
    if (!inTable || cells.length < 2 || cells[0].trim().startsWith('---')) continue
    let type = cells[1].trim()
    const nullable = type.endsWith(', nullable')
    type = type.replace(/, nullable$/, '')
    for (const name of cells[0].split(',')) tables.at(-1).push([name.trim().replace(/`/g, ''), type, nullable])
  }
  return tables
}

// A Parquet column's type in the doc's words.
function typeOf(el) {
  const lt = el.logical_type
  if (el.type === 'BYTE_ARRAY' && (el.converted_type === 'UTF8' || lt?.type === 'STRING')) return 'string'
  if (el.type === 'DOUBLE') return 'float64'
  if (el.type === 'INT64' && lt?.type === 'INTEGER' && lt.bitWidth === 64) return lt.isSigned ? 'int64' : 'uint64'
  if (el.type === 'INT64' && !lt && el.converted_type !== 'UINT_64') return 'int64'
  return `${el.type}/${el.converted_type}/${JSON.stringify(lt)}`
}

// A CSV file as rows of cells (RFC 4180 quoting, as Go's encoding/csv writes it).
function parseCSV(text) {
  const rows = []
  let row = [], cell = '', quoted = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { cell += '"'; i++ } else if (ch === '"') quoted = false; else cell += ch
    } else if (ch === '"') quoted = true
    else if (ch === ',') { row.push(cell); cell = '' } else if (ch === '\n') { row.push(cell); rows.push(row); row = []; cell = '' } else cell += ch
  }
  if (cell !== '' || row.length) { row.push(cell); rows.push(row) }
  return rows
}

// Whether hyparquet's value equals a CSV cell (Go's shortest float form).
function sameCell(v, cell) {
  if (v === null || v === undefined) return cell === ''
  if (typeof v === 'bigint') return cell === v.toString()
  if (typeof v === 'number') return Number.isNaN(v) ? cell === 'NaN' : cell !== '' && Number(cell) === v
  return cell === String(v)
}

const schemas = documentedSchemas(readFileSync(docPath, 'utf8'))
check(schemas.length === 2, `${docPath}: ${schemas.length} column tables in the tables section, want 2`)

function checkFile(name, documented, extra) {
  const path = join(resultsDir, name)
  const buf = readFileSync(path)
  const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
  const md = parquetMetadata(file)
  const got = md.schema.slice(1).map(el => [el.name, typeOf(el), el.repetition_type === 'OPTIONAL'])
  const want = got[0]?.[0] === 'point' ? [['point', 'string', false], ...documented] : documented
  check(JSON.stringify(got) === JSON.stringify(want),
    `${path}: schema\n    ${got.map(c => c.join(' ')).join('\n    ')}\n  documented\n    ${want.map(c => c.join(' ')).join('\n    ')}`)
  const codecs = new Set(md.row_groups.flatMap(g => g.columns.map(c => c.meta_data.codec)))
  return parquetReadObjects({ file, compressors }).then(rows => {
    const csvPath = join(csvDir, name.replace(/\.parquet$/, '.csv'))
    const csv = parseCSV(readFileSync(csvPath, 'utf8'))
    const head = csv[0]
    check(JSON.stringify(head) === JSON.stringify(got.map(c => c[0])), `${csvPath}: header ${head}, the Parquet's ${got.map(c => c[0])}`)
    check(rows.length === csv.length - 1, `${path}: ${rows.length} rows, ${csvPath} ${csv.length - 1}`)
    let differ = 0
    for (let i = 0; i < Math.min(rows.length, csv.length - 1); i++) {
      for (let k = 0; k < head.length; k++) {
        if (!sameCell(rows[i][head[k]], csv[i + 1][k])) {
          if (differ++ < 5) failures.push(`${path} row ${i} column ${head[k]}: hyparquet ${rows[i][head[k]]}, CSV "${csv[i + 1][k]}"`)
        }
      }
    }
    check(differ === 0, `${path}: ${differ} cells differ from ${csvPath}`)
    if (extra) extra(path, rows)
    console.log(`${path}: ${rows.length} rows, ${got.length} columns as documented, codecs ${[...codecs].join(',')}; every cell equals ${csvPath}'s`)
  })
}

const LEVELS = new Set(['window', 'seed', 'all'])
const PARAMS = {
  distance: m => ['far_mass', 'far_mass_probe', 'far_coherence', 'far_coherence_weighted', 'far_mass_bound'].includes(m),
  pos_start: m => m === 'position_loss',
  pos_end: m => m === 'position_loss',
  gap: m => m.startsWith('copy_gain'),
}

function checkTidy(path, rows) {
  const bad = (what, r) => failures.push(`${path}: ${what}: ${JSON.stringify(r, (_, v) => typeof v === 'bigint' ? Number(v) : v)}`)
  const seen = new Set()
  let n = 0
  for (const r of rows) {
    if (n > 20) break
    const before = failures.length
    if (r.metric.includes('@')) bad('a parameter inside the metric name', r)
    if (r.interval === '') bad('interval "" where it should be null', r)
    if ((r.interval === null) !== (r.lo === null) || (r.lo === null) !== (r.hi === null)) bad('bounds and interval not null together', r)
    if (!LEVELS.has(r.level)) bad('unknown level', r)
    if ((r.level === 'window') !== (r.window !== null)) bad('window set off a window row, or missing on one', r)
    if ((r.level === 'all') !== (r.seed === null) || (r.level === 'all') !== (r.n_seeds !== null)) bad('seed and n_seeds do not fit the level', r)
    for (const [col, on] of Object.entries(PARAMS)) {
      if (on(r.metric) !== (r[col] !== null)) bad(`${col} set on the wrong metric`, r)
    }
    if (r.metric.startsWith('copy_gain') !== (r.L === null)) bad('L null off the copy probe, or set on it', r)
    const key = JSON.stringify([r.point, r.level, r.variant, r.seed, r.corpus, r.protocol, r.T, r.L, r.metric, r.distance, r.pos_start, r.pos_end, r.gap, r.window],
      (_, v) => typeof v === 'bigint' ? v.toString() : v)
    if (seen.has(key)) bad('two rows share their coordinates', r)
    seen.add(key)
    if (failures.length > before) n++
  }
  const levels = {}
  for (const r of rows) levels[r.level] = (levels[r.level] ?? 0) + 1
  console.log(`${path}: rows by level ${JSON.stringify(levels)}; ${rows.filter(r => r.interval === null).length} null intervals`)
}

await checkFile('tidy.parquet', schemas[0] ?? [], checkTidy)
await checkFile('train_curves.parquet', schemas[1] ?? [])
if (failures.length) {
  console.log('FAIL\n  ' + failures.join('\n  '))
  process.exit(1)
}
console.log('PASS')
