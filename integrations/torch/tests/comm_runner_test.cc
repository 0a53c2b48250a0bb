// The engine of weft's PyTorch backend without PyTorch: ranks are threads of this process, each
// with its CommRunner on one weft communicator. Operations run in submission order; held sends
// and receives run together; a timeout aborts the communicator, fails the operation, the later
// ones and the peers'; shutdown runs what was queued. Every wait here has a deadline.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm_runner.h"

namespace weft_torch {
namespace {

using namespace std::chrono_literals;
constexpr auto kDeadline = 60s;  // any single wait; a hang fails the test instead of blocking ctest

// The outcome of one operation: empty on success, else its error.
struct Outcome {
  std::promise<std::string> promise;
  std::future<std::string> future = promise.get_future();
  std::string get() {
    if (future.wait_for(kDeadline) != std::future_status::ready) return "NOT COMPLETED within the deadline";
    return future.get();
  }
};

Op allreduceOp(std::vector<float>* data, Outcome* outcome, std::chrono::milliseconds timeout = 0ms) {
  Op op;
  op.name = "allreduce";
  op.timeout = timeout;
  op.issue = [data](weft_comm_t* comm) {
    return weft_allreduce(data->data(), data->data(), data->size(), weftFloat32, weftSum, comm, nullptr);
  };
  op.complete = [outcome](weft_comm_t*, const std::string* error) { outcome->promise.set_value(error ? *error : ""); };
  return op;
}

Op transferOp(bool send, std::vector<float>* data, int peer, Outcome* outcome) {
  Op op;
  op.name = send ? "send" : "recv";
  op.pointToPoint = true;
  op.issue = [send, data, peer](weft_comm_t* comm) {
    return send ? weft_send(data->data(), data->size(), weftFloat32, peer, comm, nullptr)
                : weft_recv(data->data(), data->size(), weftFloat32, peer, comm, nullptr);
  };
  op.complete = [outcome](weft_comm_t*, const std::string* error) { outcome->promise.set_value(error ? *error : ""); };
  return op;
}

// Runs body(rank, runner) on `n` threads, each the rank of one communicator.
template <typename Body>
void onRanks(int n, std::chrono::milliseconds timeout, Body body) {
  weft_unique_id_t id;
  ASSERT_EQ(weft_get_unique_id(&id), weftSuccess) << weft_last_error();
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        std::shared_ptr<CommRunner> runner = CommRunner::create(id, r, n, timeout);
        body(r, *runner);
        runner->shutdown();
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < n; ++r) EXPECT_EQ(errors[static_cast<size_t>(r)], "") << "rank " << r;
}

TEST(TorchCommRunner, RunsOperationsInSubmissionOrder) {
  constexpr int kRanks = 3, kOps = 40;
  onRanks(kRanks, 30s, [&](int rank, CommRunner& runner) {
    std::vector<std::vector<float>> data(kOps);
    std::vector<Outcome> outcomes(kOps);
    std::mutex orderMutex;
    std::vector<int> order;
    for (int k = 0; k < kOps; ++k) {
      data[k].assign(1000 + 100 * k, static_cast<float>(rank + k));
      Op op = allreduceOp(&data[k], &outcomes[k]);
      op.complete = [&, k](weft_comm_t*, const std::string* error) {
        {
          std::lock_guard<std::mutex> lock(orderMutex);
          order.push_back(k);
        }
        outcomes[k].promise.set_value(error ? *error : "");
      };
      runner.submit(std::move(op));
    }
    for (int k = 0; k < kOps; ++k) {
      EXPECT_EQ(outcomes[k].get(), "");
      EXPECT_EQ(data[k].front(), static_cast<float>(0 + 1 + 2 + kRanks * k)) << "op " << k;
    }
    std::vector<int> expected(kOps);
    for (int k = 0; k < kOps; ++k) expected[k] = k;
    EXPECT_EQ(order, expected);
  });
}

TEST(TorchCommRunner, HeldSendsAndReceivesOfARingRunTogether) {
  // 8 MiB each way: more than the transport's slots hold, so a send alone would wait for its
  // receiver, and every rank sending first would deadlock without the group.
  constexpr int kRanks = 3;
  onRanks(kRanks, 30s, [&](int rank, CommRunner& runner) {
    for (bool flushByCaller : {true, false}) {
      std::vector<float> out(2 << 20, static_cast<float>(rank)), in(2 << 20, -1.0f);
      Outcome sent, received;
      runner.submit(transferOp(true, &out, (rank + 1) % kRanks, &sent));
      runner.submit(transferOp(false, &in, (rank + kRanks - 1) % kRanks, &received));
      if (flushByCaller) runner.flush();  // else they go after kPointToPointHold
      EXPECT_EQ(sent.get(), "");
      EXPECT_EQ(received.get(), "");
      EXPECT_EQ(in.back(), static_cast<float>((rank + kRanks - 1) % kRanks));
    }
  });
}

TEST(TorchCommRunner, ABatchRunsInOneGroupAndAThrowingIssueFailsOnlyItsBatch) {
  onRanks(2, 30s, [&](int rank, CommRunner& runner) {
    std::vector<float> a(300000, 1.0f), b(300000, 2.0f);
    Outcome first, second, bad, after;
    std::vector<Op> batch;
    batch.push_back(transferOp(true, rank == 0 ? &a : &b, 1 - rank, &first));
    batch.push_back(transferOp(false, rank == 0 ? &b : &a, 1 - rank, &second));
    runner.submitBatch(std::move(batch));
    EXPECT_EQ(first.get(), "");
    EXPECT_EQ(second.get(), "");
    EXPECT_EQ(rank == 0 ? b.front() : a.front(), rank == 0 ? 2.0f : 1.0f);

    Op op;
    op.name = "broken";
    op.issue = [](weft_comm_t*) -> weft_result_t { throw std::runtime_error("no buffer"); };
    op.complete = [&](weft_comm_t*, const std::string* error) { bad.promise.set_value(error ? *error : ""); };
    runner.submit(std::move(op));
    EXPECT_EQ(bad.get(), "weft: broken failed on rank " + std::to_string(rank) + " of 2: no buffer");
    std::vector<float> x(10, 1.0f);
    runner.submit(allreduceOp(&x, &after));
    EXPECT_EQ(after.get(), "");
    EXPECT_EQ(x[0], 2.0f);
  });
}

TEST(TorchCommRunner, TimeoutAbortsTheCommunicatorAndFailsLaterOperationsAndThePeers) {
  std::promise<void> rank0TimedOut;
  std::shared_future<void> timedOut = rank0TimedOut.get_future().share();
  onRanks(2, 30s, [&](int rank, CommRunner& runner) {
    std::vector<float> x(1000, 1.0f);
    if (rank == 0) {
      Outcome late, next;
      auto start = std::chrono::steady_clock::now();
      runner.submit(allreduceOp(&x, &late, 500ms));  // rank 1 never joins this one
      std::string error = late.get();
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_NE(error.find("weft: allreduce on rank 0 of 2 did not complete within 500 ms"), std::string::npos)
          << error;
      EXPECT_GE(seconds, 0.45);
      EXPECT_LT(seconds, 5.0);  // the abort ends the blocked call within a second
      runner.submit(allreduceOp(&x, &next));
      EXPECT_NE(next.get().find("the communicator was aborted"), std::string::npos);
      rank0TimedOut.set_value();
    } else {
      // Rank 0 aborted: rank 1's next operation fails, naming rank 0, instead of waiting.
      ASSERT_EQ(timedOut.wait_for(kDeadline), std::future_status::ready);
      Outcome mine;
      runner.submit(allreduceOp(&x, &mine));
      std::string error = mine.get();
      EXPECT_NE(error.find("weft: allreduce failed on rank 1 of 2"), std::string::npos) << error;
      EXPECT_NE(error.find("rank 0"), std::string::npos) << error;
    }
  });
}

TEST(TorchCommRunner, ShutdownRunsWhatWasQueuedThenRefusesNewOperations) {
  onRanks(2, 30s, [&](int rank, CommRunner& runner) {
    std::vector<std::vector<float>> data(5, std::vector<float>(50000, 1.0f));
    std::vector<Outcome> outcomes(5);
    for (int k = 0; k < 5; ++k) runner.submit(allreduceOp(&data[k], &outcomes[k]));
    runner.shutdown();
    for (int k = 0; k < 5; ++k) {
      EXPECT_EQ(outcomes[k].get(), "");
      EXPECT_EQ(data[k][0], 2.0f);
    }
    Outcome refused, chained;
    runner.submit(allreduceOp(&data[0], &refused));
    EXPECT_EQ(refused.get(), "weft: the process group on rank " + std::to_string(rank) +
                                 " of 2 was shut down; allreduce was not run");
    // A refused op's callback may submit again (a hook chaining work): no lock is held then.
    Op op = allreduceOp(&data[1], &refused);
    op.complete = [&](weft_comm_t*, const std::string*) { runner.submit(allreduceOp(&data[2], &chained)); };
    runner.submit(std::move(op));
    EXPECT_NE(chained.get().find("was shut down"), std::string::npos);
  });
}

TEST(TorchCommRunner, AForkedChildRefusesWorkAndLeavesTheParentsCommunicatorAlone) {
  // A DataLoader worker is a fork: it inherits the runner but not its threads.
  onRanks(1, 30s, [&](int, CommRunner& runner) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      alarm(20);  // a hang in the child ends it instead of the test
      std::vector<float> x(4, 1.0f);
      Outcome refused;
      runner.submit(allreduceOp(&x, &refused));
      std::string error = refused.get();
      runner.shutdown();  // returns at once: nothing to join here
      _exit(error == "weft: the process group on rank 0 of 1 belongs to the process that forked this one; "
                     "allreduce was not run" ? 0 : 1);
    }
    int status = 0;
    pid_t reaped = 0;
    for (int i = 0; i < 600 && (reaped = waitpid(child, &status, WNOHANG)) == 0; ++i) std::this_thread::sleep_for(50ms);
    if (reaped != child) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      FAIL() << "the child did not end within 30 s";
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
    std::vector<float> x(4, 3.0f);
    Outcome mine;
    runner.submit(allreduceOp(&x, &mine));
    EXPECT_EQ(mine.get(), "");
    EXPECT_EQ(x[0], 3.0f);
  });
}

TEST(TorchCommRunner, InitGivesUpWhenAPeerNeverJoins) {
  weft_unique_id_t id;
  ASSERT_EQ(weft_get_unique_id(&id), weftSuccess) << weft_last_error();
  auto start = std::chrono::steady_clock::now();
  try {
    (void)CommRunner::create(id, 0, 2, 500ms);
    FAIL() << "init with a missing rank succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "weft: creating the communicator failed on rank 0 of 2: the other ranks did not all join within 500 "
                 "ms (the process group's timeout)");
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

}  // namespace
}  // namespace weft_torch
