#include "fast/threads.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace lmo::fast {
namespace {

thread_local bool in_pool_job = false;

// One parallel loop: chunks are claimed through an atomic counter by the caller and the workers.
struct Job {
  int64_t n = 0;
  int64_t grain = 1;
  int64_t chunks = 0;
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::mutex error_mutex;
  std::exception_ptr error;

  void run_chunks() {
    for (int64_t c = next.fetch_add(1); c < chunks; c = next.fetch_add(1)) {
      try {
        const int64_t begin = c * grain;
        (*fn)(begin, std::min(n, begin + grain));
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
      done.fetch_add(1);
    }
  }
};

class Pool {
 public:
  explicit Pool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void run(Job& job) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      ++generation_;
    }
    wake_.notify_all();
    in_pool_job = true;
    job.run_chunks();
    in_pool_job = false;
    // Wait until every worker has left the job (chunks finished and no worker still holds it).
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return job.done.load() == job.chunks && active_ == 0; });
    job_ = nullptr;
  }

 private:
  void work() {
    uint64_t seen = 0;
    for (;;) {
      Job* job = nullptr;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || (generation_ != seen && job_ != nullptr); });
        if (stop_) return;
        seen = generation_;
        job = job_;
        ++active_;
      }
      in_pool_job = true;
      job->run_chunks();
      in_pool_job = false;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        --active_;
      }
      finished_.notify_all();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  Job* job_ = nullptr;
  uint64_t generation_ = 0;
  int active_ = 0;
  bool stop_ = false;
};

int default_threads() {
  const unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : static_cast<int>(std::min(hc, 1024u));
}

// One loop at a time runs on the pool; set_threads waits for it too.
std::mutex& pool_mutex() {
  static std::mutex m;
  return m;
}
std::unique_ptr<Pool>& pool_slot() {
  static std::unique_ptr<Pool> p;
  return p;
}
std::atomic<int>& thread_count() {
  static std::atomic<int> n{default_threads()};
  return n;
}

}  // namespace

void set_threads(int n) {
  if (n < 1 || n > 1024) {
    throw std::invalid_argument("set_threads: n is " + std::to_string(n) +
                                ", expected 1 <= n <= 1024");
  }
  std::lock_guard<std::mutex> lock(pool_mutex());
  thread_count().store(n);
  pool_slot().reset();  // rebuilt with the new size by the next parallel loop
}

int threads() { return thread_count().load(); }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n < 0) throw std::invalid_argument("parallel_for: n is " + std::to_string(n) + ", expected >= 0");
  if (grain < 1) {
    throw std::invalid_argument("parallel_for: grain is " + std::to_string(grain) +
                                ", expected >= 1");
  }
  if (n == 0) return;
  const int64_t chunks = (n + grain - 1) / grain;
  if (chunks == 1 || threads() == 1 || in_pool_job) {
    for (int64_t c = 0; c < chunks; ++c) fn(c * grain, std::min(n, (c + 1) * grain));
    return;
  }
  std::lock_guard<std::mutex> lock(pool_mutex());
  std::unique_ptr<Pool>& pool = pool_slot();
  if (!pool || pool->size() != threads()) pool = std::make_unique<Pool>(threads());
  Job job;
  job.n = n;
  job.grain = grain;
  job.chunks = chunks;
  job.fn = &fn;
  pool->run(job);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace lmo::fast
