"""core/registry"""
