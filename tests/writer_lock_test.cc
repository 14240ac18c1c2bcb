// The store's writer lock (storage/writer_lock.h): writers take turns within
// a process and across processes, a dead holder releases it, and two
// engines indexing the same store at once give the sequential result
// (issue 21: concurrent runs differed by 89 facts).
#include "storage/writer_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "flowrag/engine.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using std::chrono::milliseconds;
using testing::TempDir;

TEST(WriterLockTest, SecondHolderWaitsAndTimesOutNamingTheStore) {
  TempDir dir;
  const std::string store = dir.File("s.db");
  auto first = WriterLock::Acquire(store, milliseconds(0));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->held());
  auto second = WriterLock::Acquire(store, milliseconds(60));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(second.status().message().find(store), std::string::npos);
  // Released by destruction; another store is independent.
  EXPECT_TRUE(WriterLock::Acquire(dir.File("other.db"), milliseconds(0)).ok());
  *first = WriterLock();
  EXPECT_TRUE(WriterLock::Acquire(store, milliseconds(0)).ok());
  // In-memory stores need no lock.
  auto memory = WriterLock::Acquire(":memory:", milliseconds(0));
  ASSERT_TRUE(memory.ok());
  EXPECT_FALSE(memory->held());
}

TEST(WriterLockTest, AHolderKilledWithSigkillReleasesTheLock) {
  TempDir dir;
  const std::string store = dir.File("s.db");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto lock = WriterLock::Acquire(store, milliseconds(0));
    const char c = lock.ok() ? '1' : '0';
    (void)!write(ready[1], &c, 1);
    pause();  // held until killed
    _exit(0);
  }
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  ASSERT_EQ(c, '1');
  auto blocked = WriterLock::Acquire(store, milliseconds(50));
  EXPECT_EQ(blocked.status().code(), StatusCode::kDeadlineExceeded);
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  auto after = WriterLock::Acquire(store, milliseconds(2000));
  EXPECT_TRUE(after.ok()) << after.status().ToString();
}

// The stats two stores must share to hold the same index.
std::string Fingerprint(Engine& e) {
  auto s = e.Stats();
  if (!s.ok()) return s.status().ToString();
  std::string out = std::to_string(s->documents) + "/" + std::to_string(s->passages) + "/" +
                    std::to_string(s->embeddings);
  for (const auto& [kind, n] : s->graph.nodes) out += " " + kind + "=" + std::to_string(n);
  for (const auto& [kind, n] : s->graph.edges) out += " " + kind + "=" + std::to_string(n);
  return out;
}

TEST(WriterLockTest, ConcurrentIndexRunsGiveTheSequentialResult) {
  const std::string demo = std::string(FLOWRAG_SOURCE_DIR) + "/examples/demo";
  TempDir dir;
  std::string sequential;
  {
    auto e = Engine::Open(dir.File("seq.db"));
    ASSERT_TRUE(e.ok());
    ASSERT_TRUE((*e)->Index({demo}).ok());
    sequential = Fingerprint(**e);
  }
  const std::string shared = dir.File("shared.db");
  std::vector<Status> results(2);
  std::vector<std::thread> writers;
  for (size_t i = 0; i < results.size(); ++i) {
    writers.emplace_back([&, i] {
      auto e = Engine::Open(shared);
      results[i] = e.ok() ? (*e)->Index({demo}).status() : e.status();
    });
  }
  for (std::thread& t : writers) t.join();
  for (const Status& st : results) EXPECT_TRUE(st.ok()) << st.ToString();
  auto e = Engine::Open(shared);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(Fingerprint(**e), sequential);
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
