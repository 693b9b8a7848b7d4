import Foundation
import TactusProtocol

/// The queue page (`/queue`): workers, queued and running jobs per detector, jobs per second
/// and failures, kept up to date from the coordinator's events; an upload form whose songs
/// appear as they finish.
struct QueuePage {
    var status: ServerStatus
    var detectors: DetectorsResponse
    var maxUploadBytes: Int

    /// One row per detector: those offered, those queued for, those with workers.
    /// A worker offering several detectors (protocol version 2) counts for each; `running` is
    /// the busy workers offering the detector.
    static func rows(status: ServerStatus, detectors: DetectorsResponse) -> [(name: String, workers: Int, queued: Int, running: Int)] {
        var names = Set(status.queue.keys).union(status.workers.flatMap(\.offered))
        names.formUnion(detectors.detectors.map(\.detector.name))
        return names.sorted().map { name in
            let workers = status.workers.filter { $0.offered.contains(name) }
            return (name, workers.count, status.queue[name] ?? 0, workers.filter { $0.runningJobs > 0 }.count)
        }
    }

    func html() -> String {
        let rows = Self.rows(status: status, detectors: detectors).map { row in
            """
            <tr data-detector="\(HTML.escape(row.name))"><td class="lead"><b>\(HTML.escape(row.name))</b></td>
            <td class="num" data-label="Workers" data-field="workers">\(row.workers)</td>
            <td class="num" data-label="Queued" data-field="queued">\(row.queued)</td>
            <td class="num" data-label="Running" data-field="running">\(row.running)</td>
            <td class="num" data-label="Finished" data-field="done">0</td>
            <td class="num" data-label="Failed" data-field="failed">0</td></tr>
            """
        }.joined(separator: "\n")
        let body = """
            <h1>Queue</h1>
            <p class="live off" id="live" aria-live="polite">Connecting to the server's events…</p>
            <div class="summary">
            <div class="stat"><b id="jps">\(HTML.number(status.jobsPerSecond, digits: 2))</b><span>jobs per second (last minute)</span></div>
            <div class="stat"><b id="queued">\(status.queue.values.reduce(0, +))</b><span>jobs queued</span></div>
            <div class="stat"><b id="running">\(status.workers.map(\.runningJobs).reduce(0, +))</b><span>jobs running</span></div>
            <div class="stat"><b id="workers">\(status.workers.count)</b><span>workers connected</span></div>
            <div class="stat"><b id="failures">0</b><span>failures since this page opened</span></div>
            <div class="stat"><b id="accepting">\(status.accepting ? "yes" : "no")</b><span>accepting songs</span></div>
            </div>
            <div class="table-wrap"><table class="cards compact" id="detectors">
            <thead><tr><th>Detector</th><th class="num">Workers</th><th class="num">Queued</th><th class="num">Running</th>
            <th class="num">Finished</th><th class="num">Failed</th></tr></thead>
            <tbody>\(rows)</tbody></table></div>
            <p class="hint">Finished and failed count the jobs since this page opened.</p>
            <div class="grid2">
            <section aria-labelledby="upload-heading">
            <h2 id="upload-heading">Add songs</h2>
            <form id="upload" class="stack" method="post" action="/api/v1/songs" enctype="application/octet-stream">
            <div class="drop" id="drop">
            <p><label for="files">Drop audio files here, or choose them:</label></p>
            <input id="files" type="file" name="files" multiple accept="audio/*,.flac,.wav,.mp3,.ogg,.opus,.m4a,.aiff">
            <p class="hint">Up to \(maxUploadBytes >> 20) MiB each. Songs already analysed are answered from the library.</p>
            </div>
            <button type="submit">Upload</button>
            </form>
            <noscript><p class="error">Uploading from this page needs JavaScript; without it, use <code>tactus submit</code>.</p></noscript>
            <ul class="log" id="uploads" aria-live="polite" aria-label="Uploaded songs"></ul>
            </section>
            <section aria-labelledby="events-heading">
            <h2 id="events-heading">Latest events</h2>
            <ul class="log" id="events" aria-label="Latest events"><li class="muted">Nothing yet.</li></ul>
            </section>
            </div>
            """
        return Page.document(title: "Queue", section: .queue, body: body, script: Self.script)
    }

    static let script = """
        (function(){
          var live = document.getElementById('live'), eventsList = document.getElementById('events');
          var uploads = document.getElementById('uploads'), tracked = {}, failures = 0, counts = {};
          function text(tag, content, cls){ var e = document.createElement(tag); e.textContent = tactusShown(content); if (cls) e.className = cls; return e; }
          function row(detector){
            var tbody = document.querySelector('#detectors tbody'), r = tbody.querySelector('tr[data-detector="' + CSS.escape(detector) + '"]');
            if (!r) {
              r = document.createElement('tr'); r.dataset.detector = detector;
              var lead = document.createElement('td'); lead.className = 'lead'; lead.appendChild(text('b', detector)); r.appendChild(lead);
              [['workers','Workers'],['queued','Queued'],['running','Running'],['done','Finished'],['failed','Failed']].forEach(function(f){
                var c = text('td', '0', 'num'); c.dataset.field = f[0]; c.dataset.label = f[1]; r.appendChild(c); });
              tbody.appendChild(r);
            }
            return r;
          }
          function set(detector, field, value){ row(detector).querySelector('[data-field="' + field + '"]').textContent = value; }
          var pending = false;
          function refresh(){
            if (pending) return; pending = true;
            setTimeout(function(){
              fetch('/api/v1/status', {credentials: 'same-origin'}).then(function(r){ return r.json(); }).then(function(s){
                pending = false; var server = s.server; if (!server) return;
                var detectors = {}, queued = 0, running = 0;
                Object.keys(server.queue).forEach(function(d){ detectors[d] = {workers: 0, queued: server.queue[d], running: 0}; queued += server.queue[d]; });
                server.workers.forEach(function(w){
                  var jobs = w.jobs ? w.jobs.length : (w.job ? 1 : 0); running += jobs;
                  (w.detectors || [w.detector]).forEach(function(name){
                    var d = detectors[name] || (detectors[name] = {workers: 0, queued: 0, running: 0});
                    d.workers++; if (jobs) d.running++; }); });
                document.getElementById('workers').textContent = server.workers.length;
                document.querySelectorAll('#detectors tbody tr').forEach(function(r){ if (!detectors[r.dataset.detector]) detectors[r.dataset.detector] = {workers: 0, queued: 0, running: 0}; });
                Object.keys(detectors).forEach(function(d){ set(d, 'workers', detectors[d].workers); set(d, 'queued', detectors[d].queued); set(d, 'running', detectors[d].running); });
                document.getElementById('jps').textContent = server.jobs_per_second.toFixed(2);
                document.getElementById('queued').textContent = queued;
                document.getElementById('running').textContent = running;
                document.getElementById('accepting').textContent = server.accepting ? 'yes' : 'no';
              }).catch(function(){ pending = false; });
            }, 300);
          }
          function log(message){
            if (eventsList.firstElementChild && eventsList.firstElementChild.classList.contains('muted')) eventsList.innerHTML = '';
            var item = text('li', new Date().toLocaleTimeString() + '  ' + message);
            eventsList.insertBefore(item, eventsList.firstChild);
            while (eventsList.children.length > 100) eventsList.removeChild(eventsList.lastChild);
          }
          function count(detector, field){ var key = detector + '/' + field; counts[key] = (counts[key] || 0) + 1; set(detector, field, counts[key]); }
          function finished(song, consensus){
            var item = tracked[song]; if (!item || item.dataset.done) return;
            item.dataset.done = '1'; item.innerHTML = '';
            var link = text('a', item.dataset.name); link.href = '/songs/' + song; item.appendChild(link);
            var bpm = consensus && consensus.bpm ? consensus.bpm.toFixed(1) + ' BPM' : 'no tempo found';
            item.appendChild(text('span', ' — finished: ' + bpm, 'finished'));
          }
          var source = new EventSource('/api/v1/events');
          source.onopen = function(){ live.className = 'live on'; live.textContent = 'Live: following the server\\'s events.'; refresh(); };
          source.onerror = function(){ live.className = 'live off'; live.textContent = 'Not connected to the server\\'s events; retrying…'; };
          source.addEventListener('job.done', function(e){ var d = JSON.parse(e.data); count(d.detector, 'done');
            log(d.detector + ' finished ' + d.song.slice(0, 12) + ': ' + (d.bpm ? d.bpm.toFixed(1) + ' BPM' : 'no tempo')); refresh(); });
          source.addEventListener('job.failed', function(e){ var d = JSON.parse(e.data); count(d.detector, 'failed');
            failures++; document.getElementById('failures').textContent = failures;
            log(d.detector + ' failed on ' + d.song.slice(0, 12) + ': ' + d.error.code + ': ' + d.error.message); refresh(); });
          source.addEventListener('song.done', function(e){ var d = JSON.parse(e.data); finished(d.song, d.consensus);
            log('song ' + d.song.slice(0, 12) + ' done: ' + (d.consensus.bpm ? d.consensus.bpm.toFixed(1) + ' BPM' : 'no tempo')); });
          source.addEventListener('worker.joined', function(e){ var d = JSON.parse(e.data); log('worker ' + d.worker_id + ' (' + d.detector + ') joined'); refresh(); });
          source.addEventListener('worker.lost', function(e){ var d = JSON.parse(e.data); log('worker ' + d.worker_id + ' (' + d.detector + ') lost: ' + d.reason); refresh(); });
          setInterval(function(){
            refresh();
            Object.keys(tracked).forEach(function(song){
              if (tracked[song].dataset.done) return;
              fetch('/api/v1/status?song=' + song, {credentials: 'same-origin'}).then(function(r){ return r.json(); }).then(function(s){
                if (s.jobs && s.jobs.length && s.jobs.every(function(j){ return ['done','failed','cancelled'].indexOf(j.state) >= 0; }))
                  fetch('/api/v1/songs/' + song).then(function(r){ return r.json(); }).then(function(c){ finished(song, c.song.consensus); });
              });
            });
          }, 5000);
          var queue = [], busy = false;
          function next(){
            if (busy || !queue.length) return; busy = true;
            var file = queue.shift(), item = text('li', file.name + ' — uploading…'); item.dataset.name = file.name;
            uploads.insertBefore(item, uploads.firstChild);
            fetch('/api/v1/songs?name=' + encodeURIComponent(file.name), {method: 'POST', body: file, credentials: 'same-origin',
              headers: {'Content-Type': 'application/octet-stream'}})
              .then(function(r){ return r.json().then(function(body){ return {ok: r.ok, body: body}; }); })
              .then(function(answer){
                if (!answer.ok) { item.textContent = tactusShown(file.name + ' — refused: ' + answer.body.message); item.className = 'error'; return; }
                var song = answer.body.song; tracked[song] = item; item.dataset.song = song;
                item.textContent = tactusShown(file.name) + ' — analysing (' + answer.body.jobs.length + ' detectors)…';
                if (answer.body.jobs.every(function(j){ return ['done','failed','cancelled'].indexOf(j.state) >= 0; }))
                  fetch('/api/v1/songs/' + song).then(function(r){ return r.json(); }).then(function(c){ finished(song, c.song.consensus); });
              })
              .catch(function(error){ item.textContent = tactusShown(file.name + ' — failed: ' + error); item.className = 'error'; })
              .then(function(){ busy = false; next(); });
          }
          function add(files){ for (var i = 0; i < files.length; i++) queue.push(files[i]); next(); }
          var form = document.getElementById('upload'), input = document.getElementById('files'), drop = document.getElementById('drop');
          form.addEventListener('submit', function(e){ e.preventDefault(); add(input.files); input.value = ''; });
          input.addEventListener('change', function(){ add(input.files); input.value = ''; });
          ['dragenter','dragover'].forEach(function(n){ drop.addEventListener(n, function(e){ e.preventDefault(); drop.classList.add('over'); }); });
          ['dragleave','drop'].forEach(function(n){ drop.addEventListener(n, function(e){ e.preventDefault(); drop.classList.remove('over'); }); });
          drop.addEventListener('drop', function(e){ add(e.dataTransfer.files); });
        })();
        """
}

extension WorkerInfo {
    /// Every detector the worker offers.
    var offered: [String] { detectors ?? [detector] }
    /// How many jobs it is running.
    var runningJobs: Int { jobs?.count ?? (job == nil ? 0 : 1) }
}
